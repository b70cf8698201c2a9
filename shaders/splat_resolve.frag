// splat_resolve.frag — the splat's resolve over the pane (drawn with blending ONE, ONE_MINUS_SRC_ALPHA), SEMANTICS §6
// "Drawing points and trails". In each layer (trails, then the points over them) a pixel's accumulated depth
// D = sum d_i, d_i = -ln(1 - a_i), gives the transmittance T = exp(-g D) and its colour the depth-weighted mean of its
// fragments', sum d_i c_i / D; the layer covers what lies under it as mean (1 - T) + under T. The exposure
// g = min(1, kKnee / D99), D99 the upper edge of the power-of-two bin holding the 99th percentile of the depths of
// the pixels the layer covers (splat_exposure.comp): 1 (alpha "over" blending's transmittance, in any order) while
// the dense pixels are shallower than kKnee; above it the depths are scaled down so that dense pixels stay
// distinguishable from sparse ones instead of all turning opaque. Pixels neither layer reached are left alone.
layout(std430, binding = 7) readonly buffer Accum { uint accum[]; };
layout(std430, binding = 8) readonly buffer DepthHist { uint depth_hist[64]; };
uniform ivec2 u_origin;  // the pane's bottom-left pixel
uniform ivec2 u_size;
out vec4 o_color;
const float kFixed = 4096.0;  // splat.glsl kSplatFixed
const float kKnee = 4.0;      // the depth of about four overlapping points of alpha 0.6

float exposure(int layer) {
  uint total = 0u;
  for (int k = 0; k < 32; ++k) total += depth_hist[32 * layer + k];
  uint want = total - total / 100u, seen = 0u;  // at least 99% of the covered pixels
  for (int k = 0; k < 32; ++k) {
    seen += depth_hist[32 * layer + k];
    if (seen >= want) return min(1.0, kKnee / (exp2(float(k + 1)) / kFixed));
  }
  return 1.0;
}

// One layer's premultiplied colour (rgb) and coverage 1 - T (a).
vec4 layer_colour(uint i, int layer) {
  uint depth = accum[i + 3u];
  if (depth == 0u) return vec4(0.0);
  vec3 mean = vec3(accum[i], accum[i + 1u], accum[i + 2u]) / float(depth);
  float cover = 1.0 - exp(-exposure(layer) * float(depth) / kFixed);
  return vec4(min(mean, vec3(1.0)) * cover, cover);
}

void main() {
  ivec2 q = ivec2(gl_FragCoord.xy) - u_origin;
  if (q.x < 0 || q.y < 0 || q.x >= u_size.x || q.y >= u_size.y) discard;
  uint i = 8u * (uint(q.y) * uint(u_size.x) + uint(q.x));
  if (accum[i + 3u] == 0u && accum[i + 7u] == 0u) discard;
  vec4 trails = layer_colour(i, 0), points = layer_colour(i + 4u, 1);
  o_color = points + trails * (1.0 - points.a);
}

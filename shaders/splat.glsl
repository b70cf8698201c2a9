// splat.glsl — shared by the splat compute shaders (splat_points.comp, splat_trails.comp; after common.glsl): the
// accumulation image of the 2D pane and how one fragment of colour c and coverage a is added to it. Each pixel holds
// two layers, the trails (0) and the points over them (1), each four fixed-point sums (kSplatFixed units per 1.0):
// sum d_i c_i (r, g, b) and sum d_i, where d_i = -ln(1 - a_i) is the fragment's optical depth, so that exp(-sum d_i)
// is the layer's transmittance under alpha "over" blending in any order (SEMANTICS §6 "Drawing points and trails").
// Integer atomics: the sums do not depend on the order.
layout(std430, binding = 7) buffer Accum { uint accum[]; };  // (h, w) pixels x 2 layers x (r, g, b, depth), row 0 the bottom
uniform ivec2 u_size;  // the pane in pixels
const float kSplatFixed = 4096.0;
const float kSplatMaxAlpha = 0.999;  // a coverage of 1 would be an infinite depth

// The pane's window coordinates (pixels, origin bottom-left) of a data-unit point, as GL maps a vertex at to_clip(p).
vec2 to_window(vec2 p) { return ((p - u_view.xy) * u_view.zw * 0.5 + 0.5) * vec2(u_size); }

void splat_pixel(ivec2 q, vec3 c, float a, uint layer) {
  if (q.x < 0 || q.y < 0 || q.x >= u_size.x || q.y >= u_size.y || !(a > 0.0)) return;
  float d = -log(1.0 - min(a, kSplatMaxAlpha)) * kSplatFixed;
  uint i = 8u * (uint(q.y) * uint(u_size.x) + uint(q.x)) + 4u * layer;
  atomicAdd(accum[i], uint(d * c.r + 0.5));
  atomicAdd(accum[i + 1u], uint(d * c.g + 0.5));
  atomicAdd(accum[i + 2u], uint(d * c.b + 0.5));
  atomicAdd(accum[i + 3u], uint(d + 0.5));
}

// The invocation's index over a 2D dispatch of 256-wide groups (more than 65,535 groups of work).
uint splat_index() { return gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u + gl_GlobalInvocationID.x; }

// contours.frag — contour lines of an isotropic 2D gaussian mixture's density (the analytic model noised to the
// shown frame's level, diffusion/density.h noised_mixture): lines where log p is an integer in
// [u_top - u_levels, u_top], about 1.5 px wide (fwidth), drawn over the pane.
layout(std430, binding = 6) readonly buffer Mix { vec4 comps[]; };  // (weight, mean x, mean y, variance)
uniform int u_K;
uniform vec4 u_view;     // clip = (p - u_view.xy) * u_view.zw
uniform ivec4 u_pane;    // x, y, w, h pixels
uniform float u_top;     // the highest level drawn (an integer)
uniform float u_levels;  // how many levels below it
in vec2 v_uv;
out vec4 o_color;

void main() {
  vec2 clip = (gl_FragCoord.xy - vec2(u_pane.xy)) / vec2(u_pane.zw) * 2.0 - 1.0;
  vec2 p = u_view.xy + clip / u_view.zw;
  float best = -1e30;
  for (int k = 0; k < u_K; ++k) {  // log-sum-exp: far from every component the density underflows
    vec2 d = p - comps[k].yz;
    best = max(best, log(comps[k].x / (6.2831853 * comps[k].w)) - dot(d, d) / (2.0 * comps[k].w));
  }
  float s = 0.0;
  for (int k = 0; k < u_K; ++k) {
    vec2 d = p - comps[k].yz;
    s += exp(log(comps[k].x / (6.2831853 * comps[k].w)) - dot(d, d) / (2.0 * comps[k].w) - best);
  }
  float g = best + log(s);
  float level = round(g);
  if (level > u_top || level < u_top - u_levels) discard;
  float a = 1.0 - smoothstep(0.5, 1.25, abs(g - level) / max(fwidth(g), 1e-6));
  if (a <= 0.0) discard;
  o_color = vec4(1.0, 1.0, 1.0, 0.85 * a);
}

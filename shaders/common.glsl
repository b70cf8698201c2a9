// common.glsl — shared by the trajectory shaders: the trajectory SSBO, the 2D projection, the camera.
// Prepended to points.vert and trails.vert by the renderer (after the #version line).
layout(std430, binding = 0) readonly buffer Traj { float traj[]; };   // (slots, B, dim) float32
layout(std430, binding = 2) readonly buffer Proj { float proj[]; };   // mean[dim], axis0[dim], axis1[dim]
uniform int u_dim;
uniform int u_B;
uniform vec4 u_view;   // clip = (p - u_view.xy) * u_view.zw

vec2 project_row(uint slot, uint row) {
  uint base = (slot * uint(u_B) + row) * uint(u_dim);
  if (u_dim == 2) return vec2(traj[base], traj[base + 1u]);
  float x = 0.0, y = 0.0;
  for (int d = 0; d < u_dim; ++d) {
    float v = traj[base + uint(d)] - proj[d];
    x += v * proj[u_dim + d];
    y += v * proj[2 * u_dim + d];
  }
  return vec2(x, y);
}

vec4 to_clip(vec2 p) { return vec4((p - u_view.xy) * u_view.zw, 0.0, 1.0); }

// A smooth cyclic palette (Inigo Quilez's cosine palettes), keyed by the particle's starting angle.
vec3 palette(float h) {
  return 0.55 + 0.45 * cos(6.28318 * (h + vec3(0.0, 0.33, 0.67)));
}
vec3 row_color(uint row) {
  vec2 p0 = project_row(0u, row);
  float h = atan(p0.y, p0.x) / 6.28318 + 0.5;
  return palette(h);
}

// image_grid.frag — image models: a grid of u_cols x u_rows samples of trajectory slot u_slot, each a
// u_side x u_side grayscale image read straight from the trajectory buffer (row-major pixels).
layout(std430, binding = 0) readonly buffer Traj { float traj[]; };
uniform int u_dim;
uniform int u_B;
uniform int u_slot;
uniform int u_cols;
uniform int u_rows;
uniform int u_side;
uniform vec2 u_range;  // value range mapped to black..white
in vec2 v_uv;
out vec4 o_color;
void main() {
  vec2 g = v_uv * vec2(u_cols, u_rows);
  ivec2 cell = ivec2(floor(g));
  vec2 f = fract(g);
  int sample_i = cell.y * u_cols + cell.x;
  // one pixel-of-image gap between cells
  float cell_px = float(u_side + 1);
  vec2 q = f * cell_px;
  if (sample_i >= u_B || q.x >= float(u_side) || q.y >= float(u_side)) { o_color = vec4(0.07, 0.08, 0.10, 1.0); return; }
  ivec2 px = ivec2(floor(q));
  uint idx = (uint(u_slot) * uint(u_B) + uint(sample_i)) * uint(u_dim) + uint(px.y * u_side + px.x);
  float v = clamp((traj[idx] - u_range.x) / (u_range.y - u_range.x), 0.0, 1.0);
  o_color = vec4(vec3(v), 1.0);
}

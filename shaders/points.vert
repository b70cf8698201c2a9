// points.vert — one point per row of trajectory slot u_slot (or of the data buffer for the overlay).
uniform int u_slot;
uniform float u_point_size;
uniform vec4 u_color;      // rgb, alpha; u_color_mode 0 uses it as is
uniform int u_color_mode;  // 0: uniform color, 1: color by the particle's start
out vec4 v_color;
void main() {
  uint row = uint(gl_VertexID);
  vec2 p = project_row(uint(u_slot), row);
  gl_Position = to_clip(p);
  gl_PointSize = u_point_size;
  v_color = u_color_mode == 1 ? vec4(row_color(row), u_color.a) : u_color;
}

// pick_path.vert — a picked row's path: vertex i is row u_row in slot i (GL_LINE_STRIP over the kept frames).
uniform int u_row;
uniform vec4 u_color;
uniform float u_point_size;
out vec4 v_color;
void main() {
  gl_Position = to_clip(project_row(uint(gl_VertexID), uint(u_row)));
  gl_PointSize = u_point_size;
  v_color = u_color;
}

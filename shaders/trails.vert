// trails.vert — GL_LINES: for each row, u_len segments between consecutive slots ending at u_slot.
// Vertex i: row = i / (2 len), segment = (i / 2) % len, end = i % 2; older segments fade out.
uniform int u_slot;
uniform int u_len;
uniform float u_alpha;
out vec4 v_color;
void main() {
  int i = gl_VertexID;
  int row = i / (2 * u_len);
  int seg = (i / 2) % u_len;
  int end = i % 2;
  int slot = max(u_slot - seg - end, 0);
  vec2 p = project_row(uint(slot), uint(row));
  gl_Position = to_clip(p);
  float age = float(seg + end) / float(u_len);
  v_color = vec4(row_color(uint(row)), u_alpha * (1.0 - age) * (1.0 - age));
}

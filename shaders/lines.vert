// lines.vert — host-built line segments (field arrows, axes): position in data units + color.
layout(location = 0) in vec2 a_pos;
layout(location = 1) in vec4 a_color;
uniform vec4 u_view;
out vec4 v_color;
void main() {
  gl_Position = vec4((a_pos - u_view.xy) * u_view.zw, 0.0, 1.0);
  v_color = a_color;
}

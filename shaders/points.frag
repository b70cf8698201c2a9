// points.frag — round, softly edged points; points under 2.5 px are drawn as plain squares (a disc mask
// would discard most of their one or two fragments).
uniform float u_point_size;
in vec4 v_color;
out vec4 o_color;
void main() {
  if (u_point_size < 2.5) { o_color = v_color; return; }
  vec2 c = gl_PointCoord * 2.0 - 1.0;
  float r2 = dot(c, c);
  if (r2 > 1.0) discard;
  float edge = 1.0 - smoothstep(0.6, 1.0, r2);
  o_color = vec4(v_color.rgb, v_color.a * edge);
}

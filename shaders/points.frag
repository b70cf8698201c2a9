// points.frag — round, softly edged points.
in vec4 v_color;
out vec4 o_color;
void main() {
  vec2 c = gl_PointCoord * 2.0 - 1.0;
  float r2 = dot(c, c);
  if (r2 > 1.0) discard;
  float edge = 1.0 - smoothstep(0.6, 1.0, r2);
  o_color = vec4(v_color.rgb, v_color.a * edge);
}

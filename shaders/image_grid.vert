// image_grid.vert — a full-viewport quad from gl_VertexID (no vertex buffer); uv in [0,1]^2, y down.
out vec2 v_uv;
void main() {
  vec2 q[6] = vec2[6](vec2(0, 0), vec2(1, 0), vec2(1, 1), vec2(0, 0), vec2(1, 1), vec2(0, 1));
  vec2 p = q[gl_VertexID];
  v_uv = vec2(p.x, 1.0 - p.y);
  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}

// splat_points.comp — the points of slot u_slot into the accumulation image's points layer (splat.glsl), one invocation per row,
// covering the pixels GL's point rasteriser covers: those whose centres lie in the u_point_size square around the
// point (the left and bottom edges in, the right and top out); from 2.5 px on, a disc with a soft edge, alpha x
// (1 - smoothstep(0.6, 1, r^2)), r the distance from the centre in half sizes (points.frag). Prepended by
// common.glsl and splat.glsl.
layout(local_size_x = 256) in;
uniform int u_slot;
uniform float u_point_size;
uniform float u_alpha;

void main() {
  uint row = splat_index();
  if (row >= uint(u_B)) return;
  vec2 w = to_window(project_row(uint(u_slot), row));
  if (!(abs(w.x) < 1e6 && abs(w.y) < 1e6)) return;  // far outside, or not finite
  float h = 0.5 * u_point_size;
  ivec2 lo = ivec2(ceil(w - h - 0.5)), hi = ivec2(ceil(w + h - 0.5));  // pixels [lo, hi)
  vec3 c = row_color(row);
  for (int y = max(lo.y, 0); y < min(hi.y, u_size.y); ++y)
    for (int x = max(lo.x, 0); x < min(hi.x, u_size.x); ++x) {
      float a = u_alpha;
      if (u_point_size >= 2.5) {
        vec2 d = (vec2(x, y) + 0.5 - w) / h;
        float r2 = dot(d, d);
        if (r2 > 1.0) continue;
        a *= 1.0 - smoothstep(0.6, 1.0, r2);
      }
      splat_pixel(ivec2(x, y), c, a, 1u);
    }
}

// splat_trails.comp — the trails into the accumulation image's trails layer (splat.glsl): one invocation per segment, u_len
// segments a row between consecutive slots ending at u_slot (trails.vert's segments and fading alpha, interpolated
// along the segment). A segment is clipped to the pane, then stepped along its major axis one pixel column (or row)
// at a time: the pixel whose centre line it crosses, from its start (in) to its end (out), as GL's diamond-exit rule
// gives for 1-px lines up to where a crossing lies exactly on a pixel edge. Prepended by common.glsl and splat.glsl.
layout(local_size_x = 256) in;
uniform int u_slot;
uniform int u_len;
uniform float u_alpha;

// Clips p0 + t (p1 - p0), t in [t0, t1], to the box [lo, hi] on one axis (Liang-Barsky); false when nothing is left.
bool clip_axis(float p0, float d, float lo, float hi, inout float t0, inout float t1) {
  if (d == 0.0) return p0 >= lo && p0 <= hi;
  float a = (lo - p0) / d, b = (hi - p0) / d;
  t0 = max(t0, min(a, b));
  t1 = min(t1, max(a, b));
  return t0 <= t1;
}

void main() {
  uint i = splat_index();
  if (i >= uint(u_B) * uint(u_len)) return;
  int row = int(i / uint(u_len)), seg = int(i % uint(u_len));
  vec2 p0 = to_window(project_row(uint(max(u_slot - seg, 0)), uint(row)));
  vec2 p1 = to_window(project_row(uint(max(u_slot - seg - 1, 0)), uint(row)));
  float a0 = 1.0 - float(seg) / float(u_len), a1 = 1.0 - float(seg + 1) / float(u_len);
  a0 *= u_alpha * a0, a1 *= u_alpha * a1;
  vec2 d = p1 - p0;
  float t0 = 0.0, t1 = 1.0;
  if (!(all(lessThan(abs(p0), vec2(1e30))) && all(lessThan(abs(p1), vec2(1e30))))) return;
  if (!clip_axis(p0.x, d.x, -1.0, float(u_size.x) + 1.0, t0, t1) ||
      !clip_axis(p0.y, d.y, -1.0, float(u_size.y) + 1.0, t0, t1)) return;
  bool xmajor = abs(d.x) >= abs(d.y);
  int ax = xmajor ? 0 : 1, ay = 1 - ax;
  float s0 = p0[ax] + t0 * d[ax], s1 = p0[ax] + t1 * d[ax];  // the major axis' span after clipping
  if (d[ax] == 0.0) return;  // a zero-length segment draws nothing
  vec3 c = row_color(uint(row));
  // Pixel centres k + 0.5 in [s0, s1) going up, (s1, s0] going down.
  int k0 = d[ax] > 0.0 ? int(ceil(s0 - 0.5)) : int(floor(s0 - 0.5));
  int k1 = d[ax] > 0.0 ? int(ceil(s1 - 0.5)) : int(floor(s1 - 0.5));
  int step = d[ax] > 0.0 ? 1 : -1;
  for (int k = k0; k != k1; k += step) {
    float t = (float(k) + 0.5 - p0[ax]) / d[ax];
    float m = p0[ay] + t * d[ay];
    ivec2 q;
    q[ax] = k;
    q[ay] = int(floor(m));
    splat_pixel(q, c, mix(a0, a1, t), 0u);
  }
}

// density.frag — the density view's tone map: each pixel of the pane shows its bin's count through the palette,
// t = log(1 + c) / log(1 + max) (u_log = 1) or c / max; empty bins are not drawn. With u_bar = 1 it draws the
// colour bar instead: t runs from 0 at the bar's bottom to 1 at its top.
layout(std430, binding = 3) readonly buffer Counts { uint counts[]; };
layout(std430, binding = 5) readonly buffer Palette { vec4 palette_rgb[]; };  // 256 entries
uniform ivec2 u_origin;  // the pane's bottom-left pixel
uniform int u_bin_px;
uniform int u_nx;
uniform int u_ny;
uniform int u_log;
uniform int u_bar;
in vec2 v_uv;
out vec4 o_color;

void main() {
  float t;
  if (u_bar == 1) {
    t = 1.0 - v_uv.y;
  } else {
    ivec2 q = ivec2(gl_FragCoord.xy) - u_origin;
    int ix = q.x / u_bin_px, iy = q.y / u_bin_px;
    if (q.x < 0 || q.y < 0 || ix >= u_nx || iy >= u_ny) discard;
    uint c = counts[1 + iy * u_nx + ix];
    if (c == 0u) discard;
    float m = float(max(counts[0], 1u));
    t = u_log == 1 ? log(1.0 + float(c)) / log(1.0 + m) : float(c) / m;
  }
  o_color = vec4(palette_rgb[clamp(int(t * 255.0 + 0.5), 0, 255)].rgb, 1.0);
}

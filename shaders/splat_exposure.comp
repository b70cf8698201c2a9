// splat_exposure.comp — the splat's exposure statistics: per layer (trails, points), a histogram of the accumulated
// depth of the pane's pixels that layer covers by powers of two (bin k: depth in [2^k, 2^(k+1)) fixed-point units,
// findMSB), one invocation per pixel, counted with atomics; splat_resolve.frag takes each one's 99th percentile.
// Reads splat.glsl's accumulation image.
layout(local_size_x = 256) in;
layout(std430, binding = 7) readonly buffer Accum { uint accum[]; };
layout(std430, binding = 8) buffer DepthHist { uint depth_hist[64]; };  // trails' 32 bins, then the points'
uniform int u_pixels;

void main() {
  uint i = gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u + gl_GlobalInvocationID.x;
  if (i >= uint(u_pixels)) return;
  for (uint layer = 0u; layer < 2u; ++layer) {
    uint depth = accum[8u * i + 4u * layer + 3u];
    if (depth != 0u) atomicAdd(depth_hist[32u * layer + uint(findMSB(depth))], 1u);
  }
}

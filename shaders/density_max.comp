// density_max.comp — the largest bin count of the density view's histogram into counts[0] (the tone map's top):
// a maximum per work group in shared memory, then one atomic per group.
layout(local_size_x = 256) in;
layout(std430, binding = 3) buffer Counts { uint counts[]; };
uniform int u_bins;
shared uint s_max;

void main() {
  if (gl_LocalInvocationIndex == 0u) s_max = 0u;
  barrier();
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(u_bins)) atomicMax(s_max, counts[1u + i]);
  barrier();
  if (gl_LocalInvocationIndex == 0u) atomicMax(counts[0], s_max);
}

// density_bin.comp — the density view's histogram (SEMANTICS §6 "The density view"): one invocation per row of
// trajectory slot u_slot; its projected point goes into bin k with e_k <= v < e_{k+1} on each axis (the last bin
// closed on the right, as diffusion/density.cpp histogram_bin), counted with an atomic add. Reads the same buffer
// the points are drawn from (the CUDA-GL interop buffer on the GPU backend); nothing goes to the host.
// Prepended by common.glsl.
layout(local_size_x = 256) in;
layout(std430, binding = 3) buffer Counts { uint counts[]; };          // [0] the largest count, then (ny, nx)
layout(std430, binding = 4) readonly buffer Edges { float edges[]; };  // nx + 1 x edges, then ny + 1 y edges
uniform int u_slot;
uniform int u_nx;
uniform int u_ny;

int bin_of(float v, int off, int n) {
  if (!(v >= edges[off] && v <= edges[off + n])) return -1;  // outside, or NaN
  float guess = (v - edges[off]) / (edges[off + n] - edges[off]) * float(n);
  int k = clamp(int(guess), 0, n - 1);
  while (k > 0 && v < edges[off + k]) --k;
  while (k < n - 1 && v >= edges[off + k + 1]) ++k;
  return k;
}

void main() {
  uint row = gl_GlobalInvocationID.x;
  if (row >= uint(u_B)) return;
  vec2 p = project_row(uint(u_slot), row);
  int ix = bin_of(p.x, 0, u_nx);
  int iy = bin_of(p.y, u_nx + 1, u_ny);
  if (ix >= 0 && iy >= 0) atomicAdd(counts[1 + iy * u_nx + ix], 1u);
}

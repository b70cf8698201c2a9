// pick_nearest.comp — the nearest row of slot u_slot to u_at within sqrt(u_r2) (data units of the 2D view), as two
// passes over the trajectory buffer: pass 0 takes the smallest squared distance (atomicMin of its bits: a
// non-negative float orders as its bits), pass 1 the lowest row at that distance. Prepended by common.glsl.
layout(local_size_x = 256) in;
layout(std430, binding = 3) buffer PickResult { uint best_d2; uint best_row; };
uniform int u_slot;
uniform vec2 u_at;
uniform float u_r2;
uniform int u_pass;
void main() {
  uint row = gl_GlobalInvocationID.x;
  if (row >= uint(u_B)) return;
  vec2 d = project_row(uint(u_slot), row) - u_at;
  float d2 = dot(d, d);
  if (!(d2 <= u_r2)) return;  // also drops a row that is not finite
  uint bits = floatBitsToUint(d2);
  if (u_pass == 0) atomicMin(best_d2, bits);
  else if (bits == best_d2) atomicMin(best_row, row);
}

// pick_path.comp — the 2D view's position of row u_row in each of the first u_slots slots (its path across the
// kept frames), gathered into a small buffer. Prepended by common.glsl.
layout(local_size_x = 64) in;
layout(std430, binding = 3) writeonly buffer PathOut { vec2 path_out[]; };
uniform int u_row;
uniform int u_slots;
void main() {
  uint s = gl_GlobalInvocationID.x;
  if (s >= uint(u_slots)) return;
  path_out[s] = project_row(s, uint(u_row));
}

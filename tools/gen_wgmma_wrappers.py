# Generates the wgmma wrappers of kernels/shared/wgmma.cuh (m64nNk16, bf16 or f16 A from registers, B from shared
# memory; the operand type is chosen by a tag argument, Bf16Tag or F16Tag of mma.cuh):
#   python3 tools/gen_wgmma_wrappers.py  (paste its output between the markers in kernels/shared/wgmma.cuh)
def wrapper(n, ty, tag):
    nr = n // 2
    regs = ", ".join("%%%d" % i for i in range(nr))
    a0 = nr
    s = []
    s.append("// D (64 x %d, fp32, %d per thread) (+)= A (64 x 16, %s in registers) * B (16 x %d, %s, shared memory, K-major)." % (n, nr, ty, n, ty))
    s.append("__device__ __forceinline__ void wgmma_m64n%dk16(float (&d)[%d], const uint32_t (&a)[4], uint64_t desc_b, int scale_d, %s) {" % (n, nr, tag))
    s.append("  asm volatile(")
    s.append('      "{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n"' % (a0 + 5))
    s.append('      "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {"' % (n, ty, ty))
    # split register list over lines
    lst = ["%%%d" % i for i in range(nr)]
    for i in range(0, nr, 16):
        chunk = ", ".join(lst[i:i+16])
        sep = ", " if i + 16 < nr else ""
        s.append('      "%s%s"' % (chunk, sep))
    s.append('      "}, {%%%d, %%%d, %%%d, %%%d}, %%%d, p, 1, 1, 0;\\n}\\n"' % (a0, a0+1, a0+2, a0+3, a0+4))
    outs = ['"+f"(d[%d])' % i for i in range(nr)]
    for i in range(0, nr, 8):
        s.append(("      : " if i == 0 else "        ") + ", ".join(outs[i:i+8]) + ("," if i + 8 < nr else ""))
    s.append('      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));')
    s.append("}")
    return "\n".join(s)
for n in (16, 64, 256):
    for ty, tag in (("bf16", "Bf16Tag"), ("f16", "F16Tag")):
        print(wrapper(n, ty, tag)); print()

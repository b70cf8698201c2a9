"""philox.py — Philox4x32-10 and the normal noise of SEMANTICS §7, in numpy (an independent implementation).

Written from the published algorithm (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
SC 2011; Random123), not from our C++ code, so golden data for stochastic sampling is computed with the
same noise the C++ program draws. uint32 arithmetic throughout; mulhilo through uint64.

    python3 tools/philox.py        # checks Random123's known-answer vectors (kat_vectors) and exits 0/1

Noise layout (SEMANTICS §7): key = (seed low 32 bits, seed high 32 bits); counter = (row, step_key, j, 0);
v = ((u >> 8) + 0.5) * 2^-24 in (0, 1); Box-Muller on (v0, v1) -> dims 4j, 4j+1 and (v2, v3) -> 4j+2, 4j+3:
sqrt(-2 ln a) cos(2 pi b), sqrt(-2 ln a) sin(2 pi b). step_key is the timestep t of the step that draws the
noise, T for the starting noise, T + 1 for "start from data". The mapping here is evaluated in float64
(the exact formula); the C++ code evaluates it in float32, so the two agree to float32 rounding.
"""
import sys

import numpy as np

PHILOX_M0 = np.uint64(0xD2511F53)
PHILOX_M1 = np.uint64(0xCD9E8D57)
PHILOX_W0 = np.uint32(0x9E3779B9)
PHILOX_W1 = np.uint32(0xBB67AE85)
_MASK32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)


def _mulhilo(m, a):
    """(hi, lo) 32-bit halves of the 64-bit product m * a, elementwise; a is a uint32 array."""
    p = m * a.astype(np.uint64)
    return (p >> _SHIFT32).astype(np.uint32), (p & _MASK32).astype(np.uint32)


def philox4x32(ctr, key, rounds=10):
    """Philox4x32-R. ctr: (..., 4) uint32, key: (..., 2) uint32 (broadcast). Returns (..., 4) uint32."""
    ctr = np.asarray(ctr, dtype=np.uint32)
    key = np.asarray(key, dtype=np.uint32)
    c0, c1, c2, c3 = (ctr[..., i].copy() for i in range(4))
    k0 = np.broadcast_to(key[..., 0], c0.shape).copy()
    k1 = np.broadcast_to(key[..., 1], c0.shape).copy()
    with np.errstate(over="ignore"):
        for r in range(rounds):
            if r > 0:  # the key schedule: bump before rounds 2..R (Random123's philox4x32_R)
                k0 = (k0 + PHILOX_W0).astype(np.uint32)
                k1 = (k1 + PHILOX_W1).astype(np.uint32)
            hi0, lo0 = _mulhilo(PHILOX_M0, c0)
            hi1, lo1 = _mulhilo(PHILOX_M1, c2)
            c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return np.stack([c0, c1, c2, c3], axis=-1)


def uniform_open01(u):
    """u uint32 -> float64 in (0, 1): ((u >> 8) + 0.5) * 2^-24 (SEMANTICS §7)."""
    return ((np.asarray(u, dtype=np.uint32) >> np.uint32(8)).astype(np.float64) + 0.5) * (2.0 ** -24)


def normal_noise(seed, step_key, n, dim, row_offset=0):
    """Standard normal noise z (n, dim) float64 for rows row_offset .. row_offset+n-1 at `step_key`."""
    seed = int(seed)
    key = np.array([seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF], dtype=np.uint32)
    nblk = (dim + 3) // 4
    rows = np.arange(row_offset, row_offset + n, dtype=np.uint64).astype(np.uint32)
    ctr = np.zeros((n, nblk, 4), dtype=np.uint32)
    ctr[:, :, 0] = rows[:, None]
    ctr[:, :, 1] = np.uint32(step_key)
    ctr[:, :, 2] = np.arange(nblk, dtype=np.uint32)[None, :]
    u = philox4x32(ctr, key)
    v = uniform_open01(u)
    r0 = np.sqrt(-2.0 * np.log(v[..., 0]))
    a0 = 2.0 * np.pi * v[..., 1]
    r1 = np.sqrt(-2.0 * np.log(v[..., 2]))
    a1 = 2.0 * np.pi * v[..., 3]
    z = np.stack([r0 * np.cos(a0), r0 * np.sin(a0), r1 * np.cos(a1), r1 * np.sin(a1)], axis=-1)
    return z.reshape(n, nblk * 4)[:, :dim].copy()


# Random123 1.14, examples/kat_vectors, the three "philox4x32 10" lines: counter[4] key[2] -> output[4].
KAT_VECTORS = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x00000000, 0x00000000),
     (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF),
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def check_kat():
    """True when every known-answer vector matches."""
    ok = True
    for ctr, key, want in KAT_VECTORS:
        got = tuple(int(w) for w in philox4x32(np.array(ctr, np.uint32), np.array(key, np.uint32)))
        match = got == want
        ok &= match
        print(("ok  " if match else "BAD ") + " ".join("%08x" % w for w in got))
    return ok


if __name__ == "__main__":
    sys.exit(0 if check_kat() else 1)

#!/usr/bin/env python3
"""draw_icon.py — draws diffscope's application icon as PNGs in the hicolor sizes (packaging/icons/).

The picture: a dark rounded square; noise dots (grey, scattered) flowing into two interleaved half-moons
(orange and blue), the toy distribution the app opens on. Standard library only (zlib + struct write the
PNG), 4x4 supersampling for anti-aliasing. Deterministic: rerunning it reproduces the committed files.
Usage: python3 tools/draw_icon.py [out_dir]   (default packaging/icons)
"""
import math
import os
import random
import struct
import sys
import zlib

SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def shapes():
    """Circles (cx, cy, r, rgba) in unit coordinates, painted in order."""
    rng = random.Random(17)
    out = []
    for _ in range(22):  # noise, left and top
        x, y = rng.uniform(0.14, 0.86), rng.uniform(0.14, 0.86)
        if x + y < 0.95:
            out.append((x, y, 0.022, (150, 156, 170, 200)))
    for i in range(14):  # upper moon, orange
        a = math.pi * i / 13
        out.append((0.40 + 0.22 * math.cos(a), 0.56 - 0.22 * math.sin(a), 0.035, (255, 150, 50, 255)))
    for i in range(14):  # lower moon, blue
        a = math.pi * i / 13
        out.append((0.60 - 0.22 * math.cos(a), 0.50 + 0.22 * math.sin(a), 0.035, (70, 160, 255, 255)))
    return out


def inside_rounded_square(x, y, margin=0.04, radius=0.18):
    lo, hi = margin + radius, 1 - margin - radius
    dx, dy = max(lo - x, 0, x - hi), max(lo - y, 0, y - hi)
    return dx * dx + dy * dy <= radius * radius


def draw(size, ss=4):
    circles = shapes()
    rows = []
    for py in range(size):
        row = bytearray()
        for px in range(size):
            acc = [0.0, 0.0, 0.0, 0.0]
            for sy in range(ss):
                for sx in range(ss):
                    x, y = (px + (sx + 0.5) / ss) / size, (py + (sy + 0.5) / ss) / size
                    if not inside_rounded_square(x, y):
                        continue
                    c = [28.0, 32.0, 44.0]
                    for cx, cy, r, (cr, cg, cb, ca) in circles:
                        if (x - cx) ** 2 + (y - cy) ** 2 <= r * r:
                            a = ca / 255
                            c = [c[0] * (1 - a) + cr * a, c[1] * (1 - a) + cg * a, c[2] * (1 - a) + cb * a]
                    for k in range(3):
                        acc[k] += c[k]
                    acc[3] += 1
            n = ss * ss
            if acc[3]:
                row += bytes([round(acc[0] / acc[3]), round(acc[1] / acc[3]), round(acc[2] / acc[3]),
                              round(255 * acc[3] / n)])
            else:
                row += bytes(4)
        rows.append(bytes(row))
    return rows


def png(size, rows):
    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + r for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "packaging", "icons")
    os.makedirs(out, exist_ok=True)
    for s in SIZES:
        with open(os.path.join(out, f"diffscope-{s}.png"), "wb") as f:
            f.write(png(s, draw(s, 4 if s <= 128 else 2)))


if __name__ == "__main__":
    main()

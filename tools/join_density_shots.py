#!/usr/bin/env python3
"""join_density_shots.py — the README's density view pictures from docs/images/density_script.txt's screenshots:
each cropped to the 2D view (the pane right of the controls, between the status strip and the timeline), the three
modes (points, density, both) joined side by side with a gap, scaled to 1/2, written as a 256-colour PNG; and the two frames
of docs/images/density_contours_script.txt the same way; with --splat, the two draw modes of
docs/images/splat_script.txt (primitives, splat) the same way.

    join_density_shots.py [--splat] SHOT_DIR OUT_DIR     (needs Pillow: Debian's python3-pil)
"""
import sys

from PIL import Image

# The 2D view in a 1300x820 screenshot (left controls ~350 px, status strip ~38 px, timeline dock ~120 px).
CROP = (352, 40, 1300, 700)


def join(paths, out):
    shots = [Image.open(p).convert("RGB").crop(CROP) for p in paths]
    w, h = shots[0].size
    gap = 8
    sheet = Image.new("RGB", (len(shots) * w + (len(shots) - 1) * gap, h), (14, 15, 19))
    for i, s in enumerate(shots):
        sheet.paste(s, (i * (w + gap), 0))
    sheet = sheet.resize((sheet.width // 2, sheet.height // 2), Image.LANCZOS)
    sheet.quantize(256, dither=Image.Dither.NONE).save(out, optimize=True)  # an adaptive palette: a small file


def main():
    if sys.argv[1] == "--splat":
        src, dst = sys.argv[2], sys.argv[3]
        for tag in ("1m", "65k"):
            join([f"{src}/{tag}_{m}.png" for m in ("primitives", "splat")], f"{dst}/splat_moons_{tag}.png")
        return
    src, dst = sys.argv[1], sys.argv[2]
    for tag, name in (("1m", "density_moons_1m.png"), ("65k", "density_moons_65k.png")):
        join([f"{src}/{tag}_{m}.png" for m in ("points", "density", "both")], f"{dst}/{name}")
    join([f"{src}/g8_frame{f}.png" for f in (7, 10)], f"{dst}/density_gaussians8_contours.png")


if __name__ == "__main__":
    main()

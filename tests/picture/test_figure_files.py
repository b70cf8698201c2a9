#!/usr/bin/env python3
"""test_figure_files.py — `diffscope sample --svg / --pdf` read by independent readers (SEMANTICS §6 "Figures").

The SVG is parsed by Python's xml.etree: one filled disc per sample (cairo writes each as a <path> whose style has
the view's point opacity, 0.6 by default; the legend draws none at that opacity), the caption in <title>, the
sidecar's JSON in <metadata>; above 20,000 samples, and in the density view, the samples are one embedded <image>
and no disc. The PDF is
read by poppler's pdfinfo (one page of 0.75 pt per pixel of --size) and pdftotext (the caption's words, the legend,
the axis labels and tick values; a flow run's infinite sigma at frame 0). A missing tool skips its test with a message; scripts/install-deps.sh installs
poppler-utils for CI.

Environment (tests/CMakeLists.txt): DIFFSCOPE_BIN the CLI, DIFFSCOPE_ROOT the repository.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

ROOT = os.environ["DIFFSCOPE_ROOT"]
BIN = os.environ["DIFFSCOPE_BIN"]
SVG = "{http://www.w3.org/2000/svg}"


def model_2d():
    moons = os.path.join(ROOT, "assets/models/moons.safetensors")
    return moons if os.path.exists(moons) else os.path.join(ROOT, "tests/data/golden/d2_h256.safetensors")


def sample(folder, n, extra):
    """Runs `sample` of the 2D model (n samples, 8 steps, seed 3, 640x480) with `extra` options."""
    cmd = [BIN, "sample", "--backend", "cpu", "--model", model_2d(), "--n", str(n), "--steps", "8", "--seed", "3",
           "--size", "640x480", "--out", os.path.join(folder, "x.npy")] + extra
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode == 3 and "EGL" in r.stderr:
        raise unittest.SkipTest("no headless GL context: " + r.stderr.strip())
    if r.returncode == 3 and "cairo" in r.stderr:
        raise unittest.SkipTest("this build has no cairo: " + r.stderr.strip())
    if r.returncode != 0:
        raise AssertionError(f"sample exited {r.returncode}: {r.stderr}")
    return r


def discs(root, opacity):
    """The filled paths whose style has fill-opacity `opacity` (cairo's discs of the samples)."""
    found = 0
    for p in root.iter(SVG + "path"):
        style = p.get("style", "")
        m = re.search(r"fill-opacity:([0-9.]+)", style)
        if m and abs(float(m.group(1)) - opacity) < 1e-3 and "fill:none" not in style:
            found += 1
    return found


class SvgFigure(unittest.TestCase):
    def test_small_run_has_one_disc_per_sample_and_the_caption(self):
        with tempfile.TemporaryDirectory() as d:
            svg = os.path.join(d, "f.svg")
            sample(d, 500, ["--svg", svg, "--trail-frames", "0"])
            root = ET.parse(svg).getroot()
            self.assertEqual(root.tag, SVG + "svg")
            self.assertEqual(root.get("width"), "480pt")  # 640 px at 0.75 pt
            self.assertEqual(discs(root, 0.6), 500)
            self.assertEqual(len(list(root.iter(SVG + "image"))), 0)
            caption = root.find(SVG + "title").text
            for part in ["ddim", "8 steps", "8 network evaluations", "seed 3", "n = 500", "step 8 of 8"]:
                self.assertIn(part, caption)
            side = json.loads(root.find(SVG + "metadata").text)
            self.assertEqual(side["n"], 500)
            self.assertEqual(side["svg"], "f.svg")
            with open(svg + ".json") as f:
                self.assertEqual(json.load(f)["seed"], 3)

    def test_above_the_rule_the_samples_are_one_embedded_raster(self):
        with tempfile.TemporaryDirectory() as d:
            svg = os.path.join(d, "big.svg")
            sample(d, 20001, ["--svg", svg, "--trail-frames", "0"])
            root = ET.parse(svg).getroot()
            self.assertEqual(discs(root, 0.6), 0)
            self.assertEqual(len(list(root.iter(SVG + "image"))), 1)
            self.assertLess(os.path.getsize(svg), 3_000_000)

    def test_the_density_view_is_one_embedded_raster_at_any_n(self):
        with tempfile.TemporaryDirectory() as d:
            svg = os.path.join(d, "density.svg")
            sample(d, 500, ["--svg", svg, "--trail-frames", "0", "--view-mode", "density"])
            root = ET.parse(svg).getroot()
            self.assertEqual(discs(root, 0.6), 0)  # the histogram is drawn by GL: no disc could show it
            self.assertEqual(len(list(root.iter(SVG + "image"))), 1)


@unittest.skipUnless(shutil.which("pdftotext") and shutil.which("pdfinfo"),
                     "pdftotext/pdfinfo missing: apt-get install poppler-utils (scripts/install-deps.sh)")
class PdfFigure(unittest.TestCase):
    def test_one_page_with_axes_legend_and_caption_text(self):
        with tempfile.TemporaryDirectory() as d:
            pdf = os.path.join(d, "f.pdf")
            sample(d, 400, ["--pdf", pdf])
            info = subprocess.run(["pdfinfo", pdf], capture_output=True, text=True, check=True).stdout
            self.assertRegex(info, r"Pages:\s+1\n")
            self.assertRegex(info, r"Page size:\s+480 x 360 pts")
            self.assertRegex(info, r"Creator:\s+diffscope")
            text = subprocess.run(["pdftotext", "-layout", pdf, "-"], capture_output=True, text=True,
                                  check=True).stdout
            for part in ["400 samples at step 8 of 8", "angle of the start noise", "trails", "data", "seed 3",
                         "8 network evaluations", "x\u2081", "x\u2082", "step", "\u03c3"]:
                self.assertIn(part, text)
            # The x axis's tick values: a row of at least 3 numbers, equally spaced, 0 among them (the camera holds
            # the origin).
            rows = [[float(w) for w in line.split()] for line in text.splitlines()
                    if len(line.split()) >= 3 and all(re.fullmatch(r"-?[0-9.]+", w) for w in line.split())]
            self.assertTrue(rows, text)
            ticks = rows[0]
            steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:])}
            self.assertEqual(len(steps), 1, ticks)
            self.assertIn(0.0, ticks)

    def test_a_flow_run_starts_at_infinite_sigma(self):
        """A flow's frame 0 is pure noise (s = 1, abar = 0): sigma is infinite, written as such, and the page draws."""
        flow = os.path.join(ROOT, "assets/models/moons_flow.safetensors")
        if not os.path.exists(flow):
            self.skipTest("no bundled moons_flow")
        with tempfile.TemporaryDirectory() as d:
            pdf = os.path.join(d, "flow.pdf")
            r = subprocess.run([BIN, "sample", "--backend", "cpu", "--model", flow, "--n", "200", "--steps", "6",
                                "--out", os.path.join(d, "x.npy"), "--pdf", pdf], capture_output=True, text=True,
                               timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            text = subprocess.run(["pdftotext", "-layout", pdf, "-"], capture_output=True, text=True,
                                  check=True).stdout
            self.assertIn("flow matching (velocity)", text)
            self.assertRegex(text, "\u03c3\\s+\u221e")  # the sigma row starts with infinity


if __name__ == "__main__":
    unittest.main()

"""Tests of gate.py's history writer (--history): fabricated bench JSON and GUI logs, CPU only.

  python3 -m unittest discover -s bench/gate      (ctest: gate_history)
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile
import unittest

GATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gate.py")

# The fused rows of `diffscope bench --json` (plus an unfused row the gate ignores), per repeat.
KERNEL_US = {
    ("denoise B=8 dim=64 H=256 S=16", "bf16"): [34.0, 34.2, 34.1],
    ("mlp3 B=16 48-64-40-24", "fp32"): [1.70, 1.68, 1.69],
}


def measure(median_ms, kernel_ms, fps=44.7):
    m = {"frames": 60, "fps": fps, "median_ms": median_ms, "kernel_ms": kernel_ms,
         "outside_kernel_ms": round(median_ms - kernel_ms, 4), "readbacks": 0, "syncs": 0, "camera_fits": 0}
    return "measure_json: " + json.dumps(m) + "\n"


class GateHistory(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.benches = []
        for i in range(3):
            rows = [{"workload": w, "precision": p, "impl": "fused", "median_us": v[i]} for (w, p), v in KERNEL_US.items()]
            rows.append({"workload": "mlp3 B=16 48-64-40-24", "precision": "fp32", "impl": "unfused", "median_us": 8.0})
            self.benches.append(self.write(f"bench_{i + 1}.json", json.dumps({"rows": rows})))
        # Three looping measures and the playback measure (moons), three looping measures (digits); the gate reads
        # only the `measure_json:` lines.
        self.moons = self.write("gui_moons.log", "script:6: note: ...\nmeasure: 60 frames ...\n" +
                                measure(22.3, 19.5) + measure(22.4, 19.5) + measure(22.35, 19.5) +
                                measure(2.0, 0.0, fps=500.0))
        self.digits = self.write("gui_digits.log", measure(14.1, 9.8) + measure(14.2, 9.8) + measure(14.0, 9.8))
        self.torch = self.write("torch_best.json", json.dumps({"denoise B=8 dim=64 H=256 S=16 | bf16": {"us": 270.0, "mode": "C"}}))
        self.history = os.path.join(self.dir, "history.jsonl")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def baseline(self, scale=1.0, drop=None):
        """A baseline at the fabricated medians times scale (scale < 1: the run reads as slower)."""
        values = {f"{w} | {p}": sorted(v)[1] * scale for (w, p), v in KERNEL_US.items()}
        values.update({
            "gui moons 65536: frame ms (loop, median)": 22.35, "gui moons 65536: outside the denoiser ms": 2.85,
            "gui moons 65536: denoiser ms per frame": 19.5, "gui moons 65536: playback frames/s": 500.0,
            "gui digits8x8 16384: frame ms (loop, median)": 14.1, "gui digits8x8 16384: outside the denoiser ms": 4.3,
            "gui digits8x8 16384: denoiser ms per frame": 9.8,
        })
        if drop:
            values["a metric this run does not measure | fp32"] = 1.0
        base = {"date": "2026-12-01", "commit": "d9f4175", "metrics": {k: {"value": v} for k, v in values.items()}}
        return self.write("baseline.json", json.dumps(base))

    def gate(self, baseline, *extra):
        cmd = [sys.executable, GATE, "--bench", *self.benches, "--gui-moons", self.moons, "--gui-digits", self.digits,
               "--baseline", baseline, "--torch", self.torch, *extra]
        return subprocess.run(cmd, capture_output=True, text=True)

    def records(self):
        with open(self.history) as f:
            return [json.loads(line) for line in f]

    def test_a_passing_run_appends_one_record_with_every_metric(self):
        r = self.gate(self.baseline(), "--history", self.history, "--commit", "abc1234")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        [rec] = self.records()
        self.assertEqual(set(rec), {"date", "commit", "device", "k", "verdict", "metrics", "baseline_commit"})
        self.assertEqual(rec["date"], datetime.date.today().isoformat())
        self.assertEqual((rec["commit"], rec["device"], rec["k"]), ("abc1234", "NVIDIA H200", 3))
        self.assertEqual((rec["verdict"], rec["baseline_commit"]), ("pass", "d9f4175"))
        self.assertEqual(len(rec["metrics"]), 2 + 7)  # two fused kernel rows, four moons and three digits metrics
        m = rec["metrics"]["denoise B=8 dim=64 H=256 S=16 | bf16"]
        self.assertAlmostEqual(m["value"], 34.1)  # the median of the three repeats
        self.assertAlmostEqual(m["spread"], round(0.2 / 34.1, 4))  # (max - min) / median
        self.assertAlmostEqual(rec["metrics"]["mlp3 B=16 48-64-40-24 | fp32"]["value"], 1.69)  # unfused row ignored
        self.assertAlmostEqual(rec["metrics"]["gui moons 65536: frame ms (loop, median)"]["value"], 22.35)
        self.assertEqual(rec["metrics"]["gui moons 65536: playback frames/s"], {"value": 500.0, "spread": 0.0})

    def test_a_regression_is_recorded_as_such_and_runs_append(self):
        self.assertEqual(self.gate(self.baseline(), "--history", self.history, "--commit", "a").returncode, 0)
        r = self.gate(self.baseline(scale=0.8), "--history", self.history, "--commit", "b", "--device", "other GPU")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("REGRESSION", r.stdout)
        recs = self.records()
        self.assertEqual([(x["commit"], x["verdict"]) for x in recs], [("a", "pass"), ("b", "regression")])
        self.assertEqual(recs[1]["device"], "other GPU")

    def test_no_history_without_the_option_and_none_for_bad_input(self):
        self.assertEqual(self.gate(self.baseline(), "--commit", "a").returncode, 0)
        self.assertFalse(os.path.exists(self.history))
        r = self.gate(self.baseline(drop=True), "--history", self.history, "--commit", "a")
        self.assertEqual(r.returncode, 2)  # a baseline metric was not measured: no verdict, no record
        self.assertFalse(os.path.exists(self.history))

    def test_history_needs_the_commit(self):
        r = self.gate(self.baseline(), "--history", self.history)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--commit", r.stderr)
        self.assertFalse(os.path.exists(self.history))


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""test_python_module.py — the Python module against the PyTorch goldens (tests/data/golden, made by
tools/make_golden.py, never by our program) and bit for bit against the CLI on the CPU; errors as
exceptions with the CLI's messages; the GIL released during compute.

Environment (set by tests/install/CMakeLists.txt): PYTHONPATH with the built package, DIFFSCOPE_ROOT the
repository, DIFFSCOPE_BIN the CLI.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np

import diffscope

ROOT = os.environ["DIFFSCOPE_ROOT"]
BIN = os.environ["DIFFSCOPE_BIN"]
GOLDEN = os.path.join(ROOT, "tests", "data", "golden")
MANIFEST = json.load(open(os.path.join(GOLDEN, "manifest.json")))


def golden(name):
    return os.path.join(GOLDEN, name)


def rel_frobenius(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)


def cli(*args):
    """Runs the CLI; returns (exit code, stderr)."""
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    return p.returncode, p.stderr


class Goldens(unittest.TestCase):
    """Every case of the manifest, float32 within 1e-5 relative Frobenius (as tests/diffusion/test_golden.cpp)."""

    def test_sample_cases(self):
        cases = [c for c in MANIFEST if c["kind"] == "sample"]
        self.assertGreater(len(cases), 0)
        for c in cases:
            with self.subTest(c["name"]):
                m = diffscope.load(golden(c["model"]))
                x = m.sample(c["n"], sampler=c["sampler"], eta=c["eta"], steps=c["steps"],
                             t_start=c["t_start_scalar"], seed=c["seed"])
                want = np.load(golden(c["expected"]))
                self.assertEqual(x.dtype, np.float32)
                self.assertEqual(x.shape, want.shape)
                self.assertLess(rel_frobenius(x, want), 1e-5)

    def test_denoise_cases(self):
        cases = [c for c in MANIFEST if c["kind"] == "denoise"]
        self.assertGreater(len(cases), 0)
        for c in cases:
            with self.subTest(c["name"]):
                m = diffscope.load(golden(c["model"]))
                x = np.load(golden(c["x"]))
                y = m.denoise(x, np.load(golden(c["t_start"])), c["steps"])
                self.assertLess(rel_frobenius(y, np.load(golden(c["expected"]))), 1e-5)

    def test_mlp3_cases(self):
        cases = [c for c in MANIFEST if c["kind"] == "mlp3"]
        self.assertGreater(len(cases), 0)
        for c in cases:
            with self.subTest(c["name"]):
                y = diffscope.mlp3(golden(c["weights"]), np.load(golden(c["x"])))
                self.assertLess(rel_frobenius(y, np.load(golden(c["expected"]))), 1e-5)


class SameAsCli(unittest.TestCase):
    """The module and the CLI run the same code: equal bit for bit on the CPU."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def out(self, name):
        return os.path.join(self.tmp.name, name)

    def test_sample_and_trajectory(self):
        runs = [dict(sampler="ddim", eta=0.5, steps=30, t_start=600, seed=7, from_data=False, stride=4),
                dict(sampler="ddpm", eta=0.0, steps=100, t_start=99, seed=2**64 - 1, from_data=True, stride=1),
                dict(sampler="ddpm-mean", eta=0.0, steps=1, t_start=0, seed=0, from_data=False, stride=1)]
        for r in runs:
            with self.subTest(**r):
                args = ["sample", "--model", "moons", "--n", 300, "--sampler", r["sampler"], "--eta", r["eta"],
                        "--steps", r["steps"], "--t-start", r["t_start"], "--seed", r["seed"],
                        "--out", self.out("x.npy"), "--trajectory", self.out("t.npy"),
                        "--trajectory-stride", r["stride"]] + (["--from-data"] if r["from_data"] else [])
                self.assertEqual(cli(*args)[0], 0)
                m = diffscope.load("moons")
                kw = dict(sampler=r["sampler"], eta=r["eta"], steps=r["steps"], t_start=r["t_start"], seed=r["seed"],
                          from_data=r["from_data"])
                x, traj = m.sample(300, trajectory=True, trajectory_stride=r["stride"], **kw)
                self.assertTrue(np.array_equal(x, np.load(self.out("x.npy"))))
                self.assertTrue(np.array_equal(traj, np.load(self.out("t.npy"))))
                self.assertTrue(np.array_equal(m.sample(300, **kw), x))

    def test_denoise_and_mlp3(self):
        c = next(c for c in MANIFEST if c["name"] == "mixed_t_start_s16")
        self.assertEqual(cli("denoise", "--model", golden(c["model"]), "--x", golden(c["x"]), "--t-start",
                             golden(c["t_start"]), "--steps", c["steps"], "--out", self.out("d.npy"),
                             "--trajectory", self.out("dt.npy"))[0], 0)
        y, traj = diffscope.load(golden(c["model"])).denoise(np.load(golden(c["x"])), np.load(golden(c["t_start"])),
                                                             c["steps"], trajectory=True)
        self.assertTrue(np.array_equal(y, np.load(self.out("d.npy"))))
        self.assertTrue(np.array_equal(traj, np.load(self.out("dt.npy"))))
        c = next(c for c in MANIFEST if c["kind"] == "mlp3")
        self.assertEqual(cli("mlp3", "--weights", golden(c["weights"]), "--x", golden(c["x"]),
                             "--out", self.out("y.npy"))[0], 0)
        self.assertTrue(np.array_equal(diffscope.mlp3(golden(c["weights"]), np.load(golden(c["x"]))),
                                       np.load(self.out("y.npy"))))


class Grid(unittest.TestCase):
    """diffscope.grid (SEMANTICS §10): each cell equals Model.sample with its settings bit for bit on the CPU, the
    CLI's --grid writes the same cells, and bad specs raise ValueError naming the axis and the value."""

    def test_cells_are_single_runs_and_the_clis(self):
        g = diffscope.grid("rows=sampler:ddim,heun cols=steps:4,9", model="moons", n=200, seed=11)
        self.assertEqual(g["x"].shape, (2, 2, 200, 2))
        self.assertEqual(g["rows"], ["sampler=ddim", "sampler=heun"])
        model = diffscope.load("moons")
        for r, sampler in enumerate(["ddim", "heun"]):
            for c, steps in enumerate([4, 9]):
                x = model.sample(200, sampler=sampler, steps=steps, seed=11)
                self.assertTrue(np.array_equal(g["x"][r, c], x), (sampler, steps))
        self.assertEqual([c["evaluations"] for c in g["cells"]], [4, 9, 7, 17])  # heun: 2N - 1
        with tempfile.TemporaryDirectory() as d:
            rc, err = cli("sample", "--model", "moons", "--n", 200, "--seed", 11, "--grid",
                          "rows=sampler:ddim,heun cols=steps:4,9", "--out", os.path.join(d, "x.npy"))
            self.assertEqual(rc, 0, err)
            self.assertTrue(np.array_equal(np.load(os.path.join(d, "x.npy")), g["x"]))

    def test_position(self):
        g = diffscope.grid("cols=steps:4,20", model="moons", n=60, seed=2, position=0.5, align="step")
        self.assertEqual([c["frame"] for c in g["cells"]], [2, 10])
        _, traj = diffscope.load("moons").sample(60, steps=4, seed=2, trajectory=True)
        self.assertTrue(np.array_equal(g["x"][0, 0], traj[2]))
        with self.assertRaises(ValueError):
            diffscope.grid("cols=steps:4", model="moons", n=10, position=2.0)
        with self.assertRaises(ValueError):
            diffscope.grid("cols=steps:4", model="moons", n=10, position=0.5, align="time")

    def test_trajectories(self):
        g = diffscope.grid("rows=sampler:ddim,heun cols=steps:3,7", model="moons", n=80, seed=5, trajectories=True)
        self.assertEqual(len(g["trajectories"]), 4)
        model = diffscope.load("moons")
        for i, (sampler, steps) in enumerate([("ddim", 3), ("ddim", 7), ("heun", 3), ("heun", 7)]):
            x, traj = model.sample(80, sampler=sampler, steps=steps, seed=5, trajectory=True)
            self.assertEqual(g["trajectory_frames"][i], list(range(steps + 1)))
            self.assertTrue(np.array_equal(g["trajectories"][i], traj), (sampler, steps))
            self.assertTrue(np.array_equal(g["x"][i // 2, i % 2], x))
        self.assertNotIn("trajectories", diffscope.grid("cols=steps:3", model="moons", n=10))

    def test_dict_spec_and_refusals(self):
        g = diffscope.grid({"cols": {"axis": "eta", "values": [0, 1]}}, model="moons", n=50, steps=5)
        self.assertEqual(g["x"].shape, (1, 2, 50, 2))
        for spec, parts in [("cols=colour:1", ["'colour'", "valid: sampler"]),
                            ("cols=steps:5,5000", ["cols steps=5000", "steps = 5000", "[1, 1000]"]),
                            ("rows=steps:5 cols=steps:6", ["'steps'", "both rows and cols"])]:
            with self.assertRaises(ValueError) as e:
                diffscope.grid(spec, model="moons", n=10)
            for p in parts:
                self.assertIn(p, str(e.exception))
        for kw, part in [(dict(n=0), "n = 0 is out of range"), (dict(seed=-1), "seed = -1 is out of range"),
                         (dict(steps=1.5), "steps = 1.5 is not an int"), (dict(eta=2.0), "eta = 2 is out of range")]:
            with self.assertRaises(ValueError) as e:
                diffscope.grid("cols=steps:2", model="moons", **kw)
            self.assertIn(part, str(e.exception))


class DLPackHost(unittest.TestCase):
    def test_host_dlpack_input(self):
        """An object offering only DLPack on the CPU (as a torch CPU tensor does) is read without __array__."""
        class OnlyDLPack:
            def __init__(self, a):
                self.a = a

            def __dlpack__(self, stream=None):
                return self.a.__dlpack__()

            def __dlpack_device__(self):
                return self.a.__dlpack_device__()

        c = next(c for c in MANIFEST if c["kind"] == "mlp3")
        x = np.load(golden(c["x"])).astype(np.float32)
        y = diffscope.mlp3(golden(c["weights"]), OnlyDLPack(x))
        self.assertTrue(np.array_equal(y, diffscope.mlp3(golden(c["weights"]), x)))
        self.assertLess(rel_frobenius(y, np.load(golden(c["expected"]))), 1e-5)


class Errors(unittest.TestCase):
    """Bad input: ValueError with the CLI's message (argument names without '--'); unavailable: RuntimeError."""

    def same_message(self, exc, cli_args):
        code, err = cli(*cli_args)
        self.assertEqual(code, 2)
        def plain(msg):  # the module names arguments as Python does: n, t_start (the CLI: --n, --t-start)
            return msg.replace("--", "").replace("t-start", "t_start")
        self.assertEqual(plain(str(exc.exception)), plain(err.strip().removeprefix("diffscope: error: ")))

    def test_out_of_range(self):
        m = diffscope.load("moons")
        out = os.path.join(tempfile.gettempdir(), "diffscope_py_err.npy")
        for kw, flag, value in [("n", "--n", 0), ("t_start", "--t-start", 1000), ("eta", "--eta", 1.5),
                                ("seed", "--seed", -1)]:
            with self.subTest(kw), self.assertRaises(ValueError) as e:
                m.sample(**{kw: value})
            self.same_message(e, ["sample", "--model", "moons", "--out", out, flag, value])
        self.assertFalse(os.path.exists(out))
        with self.assertRaises(ValueError) as e:
            m.sample(t_start=10, steps=12)
        self.assertIn("steps = 12 is out of range; valid: [1, 11]", str(e.exception))
        with self.assertRaises(ValueError):
            m.sample(precision="bf16")
        with self.assertRaises(ValueError):
            m.denoise(np.zeros((3, 5), np.float32), 10, 4)  # width 5, dim 2
        with self.assertRaises(ValueError):
            m.denoise(np.array([[np.nan, 0]], np.float32), 10, 4)
        with self.assertRaises(ValueError):
            m.denoise(np.zeros((3, 2), np.float32), [1, 2], 4)  # 2 t_start for 3 rows

    def test_bad_names_name_the_keyword(self):
        m = diffscope.load("moons")
        for kw, value in [("sampler", "euler"), ("spacing", "cosine")]:
            with self.subTest(kw), self.assertRaises(ValueError) as e:
                m.sample(**{kw: value})
            self.assertTrue(str(e.exception).startswith("%s = '%s' is not a %s; valid: " % (kw, value, kw)),
                            str(e.exception))
        with self.assertRaises(ValueError) as e:
            m.sample(eta=-0.5)
        self.assertTrue(str(e.exception).startswith("eta = -0.5 is out of range"), str(e.exception))
        with self.assertRaises(ValueError) as e:
            m.sample(10, steps=2.5)
        self.assertTrue(str(e.exception).startswith("steps = 2.5 is not an int"), str(e.exception))
        with self.assertRaises(ValueError) as e:
            m.denoise(np.zeros((3, 5), np.float32), 10, 4)
        self.assertTrue(str(e.exception).startswith("x has width 5"), str(e.exception))
        with self.assertRaises(ValueError) as e:
            m.denoise(np.zeros((1, 2), np.float32), [5000], 4)
        self.assertTrue(str(e.exception).startswith("t_start[0] = 5000 is out of range"), str(e.exception))
        with self.assertRaises(ValueError) as e:
            m.sample(steps_offset=-1)
        self.assertTrue(str(e.exception).startswith("steps_offset = -1 is out of range"), str(e.exception))

    def test_model_metadata_of_the_families_read_on_load(self):
        """A file whose __metadata__ names a family loads in it (the prediction-type report's files); an unknown
        value raises ValueError naming the key, the value and what is supported, as the CLI refuses it."""
        d = os.path.join(ROOT, "tests", "data", "reported", "prediction-type")
        with self.assertRaises(ValueError) as e:
            diffscope.load(os.path.join(d, "unknown.safetensors"))
        self.assertIn("__metadata__ 'prediction_type' = 'velocity-ish'", str(e.exception))
        self.assertIn("supported: epsilon", str(e.exception))
        for name in ["epsilon", "v_prediction", "sample", "flow"]:
            with self.subTest(name):
                x = diffscope.load(os.path.join(d, name + ".safetensors")).sample(4, steps=3)
                self.assertEqual(x.shape, (4, 2))
                self.assertTrue(np.isfinite(x).all())

    def test_default_t_start_is_the_models_last_usable(self):
        """t_start defaults to T - 1 of the model (T = 500: the same samples as t_start=499 and as the CLI's
        default run), or to the last usable t with a UserWarning where the schedule refuses T - 1."""
        t500 = os.path.join(ROOT, "tests", "data", "reported", "t-not-1000", "t500.safetensors")
        m = diffscope.load(t500)
        x = m.sample(8, steps=5, seed=2)
        np.testing.assert_array_equal(x, m.sample(8, steps=5, seed=2, t_start=499))
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "x.npy")
            rc, err = cli("sample", "--model", t500, "--n", 8, "--steps", 5, "--seed", 2, "--out", out)
            self.assertEqual(rc, 0, err)
            np.testing.assert_array_equal(x, np.load(out))
        with self.assertRaises(ValueError) as e:
            m.sample(8, t_start=999)
        self.assertIn("t_start = 999 is out of range; valid: [0, 499]", str(e.exception))
        under = os.path.join(ROOT, "tests", "data", "reported", "schedule-underflow", "underflow_betas.safetensors")
        u = diffscope.load(under)
        with self.assertWarns(UserWarning) as w:
            y = u.sample(8, seed=2)
        self.assertIn("t_start defaults to 24, not T - 1 = 119", str(w.warning))
        np.testing.assert_array_equal(y, u.sample(8, seed=2, t_start=24))

    def test_missing_model(self):
        with self.assertRaises(ValueError) as e:
            diffscope.load("no_such_model")
        self.assertIn("no such file and no bundled model of that name; bundled: ", str(e.exception))
        self.assertIn("moons", str(e.exception))
        with self.assertRaises(ValueError):
            diffscope.load("/nonexistent/model.safetensors")

    def test_cuda_unavailable(self):
        if diffscope.cuda_available():
            self.skipTest("a CUDA device is present")
        with self.assertRaises(RuntimeError) as e:
            diffscope.load("moons").sample(8, backend="cuda")
        self.assertIn("use backend = 'cpu'", str(e.exception))


def overflowing_model(path):
    """moons.safetensors with every weight of the last layer set to 1e30 (finite, so the loader takes it; the
    network's output overflows to inf and the samples to NaN). Written from the file format (8-byte header length,
    JSON header, raw little-endian float32), not by our program."""
    src = os.path.join(ROOT, "assets", "models", "moons.safetensors")
    raw = bytearray(open(src, "rb").read())
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    begin, end = header["eps_net.4.weight"]["data_offsets"]
    assert header["eps_net.4.weight"]["dtype"] == "F32"
    raw[8 + n + begin:8 + n + end] = np.full((end - begin) // 4, 1e30, "<f4").tobytes()
    open(path, "wb").write(raw)


class GuidanceKeywords(unittest.TestCase):
    """class_label, guidance_scale, guidance_interval, guidance_rescale (SEMANTICS §12) as the CLI's --class and
    guidance options: the same samples bit for bit on the CPU, and bad values raise ValueError naming the keyword."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
        import test_guidance_numpy  # the class-conditional file writer (reference module layout)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.path = os.path.join(cls.tmp.name, "classes.safetensors")
        test_guidance_numpy.write_safetensors(cls.path, test_guidance_numpy.class_network())

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_same_as_the_cli(self):
        m = diffscope.load(self.path)
        x = m.sample(64, steps=8, seed=3, sampler="heun", class_label=2, guidance_scale=3.0,
                     guidance_interval=(0.2, 20.0), guidance_rescale=0.5)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "x.npy")
            code, err = cli("sample", "--model", self.path, "--n", 64, "--steps", 8, "--seed", 3, "--sampler", "heun",
                            "--class", 2, "--guidance-scale", 3, "--guidance-interval", "0.2,20",
                            "--guidance-rescale", 0.5, "--out", out)
            self.assertEqual(code, 0, err)
            np.testing.assert_array_equal(x, np.load(out))
        np.testing.assert_array_equal(m.sample(64, steps=8, class_label=1, guidance_scale=0), m.sample(64, steps=8))

    def test_bad_values_name_the_keyword(self):
        m = diffscope.load(self.path)
        cases = [
            (dict(class_label=3), "class_label = 3 is out of range; valid: [0, 2]"),
            (dict(class_label=-1), "class_label = -1 is out of range"),
            (dict(guidance_scale=2.0), "guidance_scale = 2 needs class_label"),
            (dict(class_label=0, guidance_scale=200), "guidance_scale = 200 is out of range; valid: [-20, 100]"),
            (dict(class_label=0, guidance_scale=2, guidance_interval=(3, 1)), "guidance_interval = 3,1 is not valid"),
            (dict(class_label=0, guidance_scale=2, guidance_interval=3), "guidance_interval = 3 is not a pair"),
            (dict(class_label=0, guidance_scale=2, guidance_rescale=2), "guidance_rescale = 2 is out of range"),
            (dict(class_label=0, guidance_scale=2, backend="cuda"), "backend cuda does not run"),
        ]
        for kwargs, message in cases:
            with self.subTest(kwargs), self.assertRaises(ValueError) as e:
                m.sample(16, **{"steps": 4, **kwargs})
            self.assertIn(message, str(e.exception))


class FamilyKeywords(unittest.TestCase):
    """The model-family keywords (prediction_type, sigmas, flow_shift, flow_mu) and Model's family properties: bad
    values raise ValueError naming the keyword, the value and the valid values, as the CLI's options do."""

    def test_model_family_properties(self):
        m = diffscope.load("moons")
        self.assertEqual(m.prediction_type, "epsilon")
        self.assertTrue(m.convention.startswith("epsilon: x_t = sqrt(abar) x0 + sqrt(1 - abar) eps"), m.convention)
        self.assertIn("time input t/T (T = 1000)", m.convention)

    def test_bad_values_name_the_keyword(self):
        m = diffscope.load("moons")
        cases = [
            (dict(prediction_type="x0"), "prediction_type = 'x0' is not a known value; supported: epsilon, sample, "
                                         "v_prediction, flow (or flow_prediction), edm"),
            (dict(prediction_type=1), "prediction_type = 1 is not a str; valid: None or one of epsilon"),
            (dict(sigmas=[1.0, 2.0, 0.0]), "sigmas: value 1 = 2 is out of range; valid: strictly decreasing levels"),
            (dict(sigmas=np.array([3.0, 0.0, 0.0])), "sigmas: value 1 = 0 is out of range; valid: > 0 (only the last"),
            (dict(sigmas=[3.0, float("nan")]), "sigmas: value 1 = nan is out of range; valid: finite levels >= 0"),
            (dict(sigmas=[]), "sigmas is empty; valid: None or at least one level"),
            (dict(sigmas="14.6,0"), "sigmas = '14.6,0' is not a 1-D sequence of numbers"),
            (dict(sigmas=[[2.0, 1.0]]), "sigmas = [[2.0, 1.0]] (dtype float64, 2 dimensions) is not a 1-D sequence"),
            (dict(sigmas=[True, False]), "(dtype bool, 1 dimensions) is not a 1-D sequence of numbers"),
            (dict(sigmas=[2.0, 1.0, 0.0], steps=5), "steps = 5 disagrees with sigmas (2 steps)"),
            (dict(flow_shift=0.0), "flow_shift = 0 is out of range; valid: > 0"),
            (dict(flow_shift=-1), "flow_shift = -1 is out of range; valid: > 0"),
            (dict(flow_shift=True), "flow_shift = True is not a real number; valid: None or a number"),
            (dict(flow_shift="3"), "flow_shift = '3' is not a real number"),
            (dict(flow_mu=float("inf")), "flow_mu = inf is not finite; valid: a finite number"),
        ]
        for kwargs, message in cases:
            with self.subTest(kwargs), self.assertRaises(ValueError) as e:
                m.sample(16, **{"steps": 4, **kwargs})
            self.assertIn(message, str(e.exception))
        with self.assertRaises(ValueError) as e:
            m.denoise(np.zeros((2, 2), np.float32), 10, 2, prediction_type="velocity")
        self.assertIn("prediction_type = 'velocity' is not a known value", str(e.exception))
        with self.assertRaises(ValueError) as e, self.assertWarns(UserWarning):  # the override's note, then:
            m.denoise(np.zeros((2, 2), np.float32), 10, 2, prediction_type="flow")  # denoise steps t -> t - 1
        self.assertIn("a flow model with time input T*s does not run there", str(e.exception))
        with self.assertWarns(UserWarning):  # sample and v_prediction run: the posterior mean in the family
            y = m.denoise(np.zeros((2, 2), np.float32), 10, 2, prediction_type="v_prediction")
        self.assertEqual(y.shape, (2, 2))

    def test_prediction_type_override_warns_and_runs_that_family(self):
        m = diffscope.load(os.path.join(ROOT, "assets", "models", "gaussians8-exact.safetensors"))
        with self.assertWarns(UserWarning) as w:
            v = m.sample(64, steps=10, seed=3, prediction_type="v_prediction")
        self.assertIn("v_prediction", str(w.warning))
        eps = m.sample(64, steps=10, seed=3)  # the mixture's v is its exact eps in another form: the same ODE
        self.assertLess(float(np.abs(v - eps).max()), 1e-4)
        with self.assertRaises(ValueError) as e:  # a file that names its family refuses another
            diffscope.load(os.path.join(ROOT, "tests", "data", "reported", "prediction-type",
                                        "v_prediction.safetensors")).sample(8, steps=2, prediction_type="flow")
        self.assertIn("prediction_type = flow contradicts the model file, whose prediction_type is v_prediction",
                      str(e.exception))

    def test_accepted_values(self):
        m = diffscope.load("moons")
        x = m.sample(16, steps=4, seed=2, prediction_type=None, sigmas=None, flow_shift=None, flow_mu=None)
        self.assertTrue(np.array_equal(x, m.sample(16, steps=4, seed=2)))
        # numpy scalars and integers are real numbers
        for v in (np.float32(2.5), np.int64(3), 3):
            with self.subTest(repr(v)):
                try:
                    m.sample(16, steps=4, flow_shift=v)
                except ValueError as e:  # a VP model may refuse a flow shift, but not as a type error
                    self.assertNotIn("is not a real number", str(e))


class ResultsAndArguments(unittest.TestCase):
    """SEMANTICS §9 for the module: a non-finite result is a ValueError as in the CLI, never a returned array;
    t_start takes numpy integers; paths take os.PathLike."""

    def test_overflowing_run_raises_like_the_cli(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "huge.safetensors")
            overflowing_model(path)
            m = diffscope.load(path)
            with self.assertRaises(ValueError) as e:
                m.sample(8, steps=5)
            self.assertIn("x: row 0", str(e.exception))
            self.assertIn("is not finite", str(e.exception))
            self.assertIn("nothing was returned", str(e.exception))
            with self.assertRaises(ValueError) as e:
                m.denoise(np.ones((4, 2), np.float32), 999, 3, trajectory=True)
            self.assertIn("is not finite", str(e.exception))
            code, err = cli("sample", "--model", path, "--n", 8, "--steps", 5, "--out", os.path.join(d, "x.npy"))
            self.assertEqual(code, 2)
            self.assertIn("is not finite", err)

    def test_t_start_numpy_integers_and_bad_types(self):
        m = diffscope.load("moons")
        x = np.random.default_rng(1).standard_normal((6, 2)).astype(np.float32)
        want = m.denoise(x, 40, 5)
        for t in (np.int64(40), np.int32(40), np.array(40), np.full(6, 40, np.int64)):
            with self.subTest(type(t).__name__):
                self.assertTrue(np.array_equal(m.denoise(x, t, 5), want))
        for bad in (5.7, np.full(6, 40.0), "5"):
            with self.subTest(repr(bad)), self.assertRaises(ValueError) as e:
                m.denoise(x, bad, 5)
            self.assertIn("t_start = ", str(e.exception))
            self.assertIn("is not an int or a 1-D integer array", str(e.exception))

    def test_paths_take_pathlike(self):
        import pathlib
        m = diffscope.load(pathlib.Path(ROOT) / "assets" / "models" / "moons.safetensors")
        self.assertEqual(m.dim, 2)
        w = pathlib.Path(golden("mlp3_b16_48_64_40_24_weights.safetensors"))
        y = diffscope.mlp3(w, np.ones((2, 48), np.float32))
        self.assertEqual(y.shape, (2, 24))
        with self.assertRaises(ValueError) as e:
            diffscope.load(3)
        self.assertIn("is not a path", str(e.exception))

    def test_ctrl_c_stops_a_long_sample(self):
        # Found by a newcomer trial: SIGINT was ignored until sample() returned (minutes; a stuck Jupyter kernel).
        code = ("import sys, diffscope\n"
                "m = diffscope.load('moons')\n"
                "print('started', flush=True)\n"
                "try:\n"
                "    m.sample(n=200000, steps=1000, backend='cpu')\n"
                "except KeyboardInterrupt:\n"
                "    print('interrupted', flush=True)\n"
                "    sys.exit(7)\n")
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=os.environ.copy())
        try:
            self.assertEqual(p.stdout.readline().strip(), "started")
            time.sleep(1.5)
            p.send_signal(signal.SIGINT)
            out, _ = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(p.returncode, 7, out)
        self.assertIn("interrupted", out)


class SpacingsAndRoots(unittest.TestCase):
    def test_spacing_bit_for_bit_with_the_cli(self):
        m = diffscope.load("moons")
        for sampler, spacing, offset, steps in [("dpmpp-2m", "karras", 0, 12), ("ddim", "leading", 1, 10),
                                                ("heun", "trailing", 0, 6)]:
            with self.subTest(sampler + "/" + spacing), tempfile.TemporaryDirectory() as d:
                out = os.path.join(d, "x.npy")
                rc, err = cli("sample", "--model", "moons", "--n", 256, "--sampler", sampler, "--spacing", spacing,
                              "--steps-offset", offset, "--steps", steps, "--seed", 5, "--backend", "cpu", "--out", out)
                self.assertEqual(rc, 0, err)
                x = m.sample(256, sampler=sampler, spacing=spacing, steps_offset=offset, steps=steps, seed=5)
                np.testing.assert_array_equal(x, np.load(out))
                # in chunks (a trajectory every 5 steps): the solver's state survives the chunk boundaries
                xs, traj = m.sample(256, sampler=sampler, spacing=spacing, steps_offset=offset, steps=steps, seed=5,
                                    trajectory=True, trajectory_stride=5)
                np.testing.assert_array_equal(xs, x)
                np.testing.assert_array_equal(traj[-1], x)

    def test_scheduler_config_as_the_cli(self):
        """scheduler_config=PATH is --scheduler-config: the analytic model takes the config's cosine schedule and
        its trailing spacing and steps_offset (bit for bit with the CLI); a spacing given as well wins; the loaded
        model keeps its own schedule for later calls; a bad value raises ValueError naming the key."""
        m = diffscope.load("gaussians8-exact")
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "scheduler_config.json")
            with open(cfg, "w") as f:
                json.dump({"_class_name": "DDIMScheduler", "num_train_timesteps": 1000,
                           "beta_schedule": "squaredcos_cap_v2", "timestep_spacing": "trailing", "steps_offset": 0,
                           "clip_sample": False}, f)
            for extra in [[], ["--spacing", "linspace"]]:
                with self.subTest(" ".join(extra) or "config's spacing"):
                    out = os.path.join(d, "x.npy")
                    rc, err = cli("sample", "--model", "gaussians8-exact", "--n", 300, "--sampler", "dpmpp-2m",
                                  "--steps", 9, "--seed", 4, "--backend", "cpu", "--scheduler-config", cfg, *extra,
                                  "--out", out)
                    self.assertEqual(rc, 0, err)
                    kw = {"spacing": extra[1]} if extra else {}
                    x = m.sample(300, sampler="dpmpp-2m", steps=9, seed=4, scheduler_config=cfg, **kw)
                    np.testing.assert_array_equal(x, np.load(out))
            # the config changed the result (cosine betas, trailing steps), and only for that call
            plain = m.sample(300, sampler="dpmpp-2m", steps=9, seed=4)
            self.assertGreater(np.abs(plain - x).max(), 1e-3)
            rc, err = cli("sample", "--model", "gaussians8-exact", "--n", 300, "--sampler", "dpmpp-2m", "--steps", 9,
                          "--seed", 4, "--backend", "cpu", "--out", os.path.join(d, "plain.npy"))
            self.assertEqual(rc, 0, err)
            np.testing.assert_array_equal(plain, np.load(os.path.join(d, "plain.npy")))
            with open(cfg, "w") as f:
                json.dump({"beta_schedule": "sigmoid", "clip_sample": False}, f)
            with self.assertRaises(ValueError) as e:
                m.sample(10, scheduler_config=cfg)
            self.assertIn("beta_schedule", str(e.exception))

    def test_bundled_models_found_without_diffscope_root(self):
        """From the build tree with DIFFSCOPE_ROOT unset and another working folder (README 'Python')."""
        pkg = os.path.dirname(os.path.abspath(diffscope.__file__))
        repo = os.path.normpath(os.path.join(pkg, "..", "..", ".."))
        if not os.path.isdir(os.path.join(repo, "assets", "models")):
            self.skipTest("the build folder is not inside the repository")
        env = {k: v for k, v in os.environ.items() if k != "DIFFSCOPE_ROOT"}
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run([sys.executable, "-c", "import diffscope; print(diffscope.load('moons').sample(4).shape)"],
                               cwd=d, env=env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "(4, 2)")


class Index:
    """An integer type that is neither int nor numpy: only __index__ (as a user's own integer class)."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


class NumpyIntegers(unittest.TestCase):
    """Every integer argument takes anything with __index__ (numpy integers included; not bool), with the result of
    the Python-int call; a range error shows the value as given (also beyond 64 bits)."""

    def test_sample_arguments(self):
        m = diffscope.load("moons")
        base = dict(n=64, steps=10, t_start=50, seed=5)
        want = m.sample(**base)
        for kw, v in [("n", np.int64(64)), ("n", Index(64)), ("steps", np.int64(10)), ("steps", np.uint8(10)),
                      ("t_start", np.int32(50)), ("t_start", np.uint16(50)), ("seed", np.int64(5)),
                      ("seed", np.uint64(5)), ("seed", Index(5))]:
            with self.subTest(kw=kw, type=type(v).__name__):
                np.testing.assert_array_equal(m.sample(**{**base, kw: v}), want)
        # the reported case: seed = np.uint64(2**64 - 1), steps_offset = np.int64(1)
        np.testing.assert_array_equal(m.sample(64, steps=10, t_start=50, seed=np.uint64(2**64 - 1)),
                                      m.sample(64, steps=10, t_start=50, seed=2**64 - 1))
        np.testing.assert_array_equal(m.sample(64, steps=10, t_start=50, seed=5, spacing="leading",
                                               steps_offset=np.int64(1)),
                                      m.sample(64, steps=10, t_start=50, seed=5, spacing="leading", steps_offset=1))
        x, traj = m.sample(64, steps=10, t_start=50, seed=5, trajectory=True, trajectory_stride=np.int16(3))
        x2, traj2 = m.sample(64, steps=10, t_start=50, seed=5, trajectory=True, trajectory_stride=3)
        np.testing.assert_array_equal(traj, traj2)

    def test_denoise_arguments(self):
        m = diffscope.load("moons")
        x = np.random.default_rng(2).standard_normal((6, 2)).astype(np.float32)
        want = m.denoise(x, 40, 5)
        for t, steps in [(np.int64(40), np.int64(5)), (np.uint64(40), np.uint32(5)), (Index(40), Index(5)),
                         (np.full(6, 40, np.uint16), 5), (np.full(6, 40, np.uint64), np.int8(5))]:
            with self.subTest(t=repr(t), steps=repr(steps)):
                np.testing.assert_array_equal(m.denoise(x, t, steps), want)

    def test_bools_are_not_integers(self):
        m = diffscope.load("moons")
        for kw in ("n", "steps", "t_start", "seed", "steps_offset", "trajectory_stride"):
            for b in (True, np.bool_(True)):
                with self.subTest(kw=kw, type=type(b).__name__), self.assertRaises(ValueError) as e:
                    m.sample(**{"n": 8, "t_start": 5, kw: b})
                # repr(b): "True", or NumPy 2's "np.True_" for np.bool_
                self.assertTrue(str(e.exception).startswith(kw + " = " + repr(b) + " is not an int"), str(e.exception))
        with self.assertRaises(ValueError) as e:
            m.denoise(np.zeros((2, 2), np.float32), 5, True)
        self.assertTrue(str(e.exception).startswith("steps = True is not an int"), str(e.exception))

    def test_range_errors_show_the_value_as_given(self):
        m = diffscope.load("moons")
        seed_valid = "; valid: an integer in [0, 18446744073709551615]"
        for kw, v, msg in [
                ("seed", np.int64(-1), "seed = -1 is out of range" + seed_valid),
                ("seed", 2**64, "seed = 18446744073709551616 is out of range" + seed_valid),
                ("steps", np.uint64(2**64 - 1), "steps = 18446744073709551615 is out of range; valid: [1, 51]"),
                ("n", 2**70, "n = 1180591620717411303424 is out of range; valid: [1, "),
                ("t_start", np.int64(-3), "t_start = -3 is out of range; valid: [0, 999]"),
                ("steps_offset", np.int64(-1), "steps_offset = -1 is out of range; valid: [0, 2147483647]"),
                ("trajectory_stride", np.uint64(2**63), "trajectory_stride = 9223372036854775808 is out of range")]:
            with self.subTest(kw=kw), self.assertRaises(ValueError) as e:
                m.sample(**{"n": 8, "t_start": 50, kw: v})
            self.assertTrue(str(e.exception).startswith(msg), str(e.exception))
        # denoise steps beyond int: refused, never wrapped (2**32 + 1 would run 1 step)
        with self.assertRaises(ValueError) as e:
            m.denoise(np.zeros((2, 2), np.float32), 5, 2**32 + 1)
        self.assertTrue(str(e.exception).startswith("steps = 4294967297 is out of range; valid: [1, 2147483647]"),
                        str(e.exception))


class ArrayDtypes(unittest.TestCase):
    """SEMANTICS §6: x is float16, float32 or float64 (as the CLI's --x); every other dtype is refused before any
    cast, naming the argument and the dtype; t_start arrays are signed or unsigned integers, range-checked as
    given (a uint64 is never wrapped to a negative number)."""

    def setUp(self):
        self.m = diffscope.load("moons")
        self.x = np.random.default_rng(3).standard_normal((6, 2)).astype(np.float32)

    def test_float_dtypes_accepted(self):
        want = self.m.denoise(self.x, 40, 5)
        np.testing.assert_array_equal(self.m.denoise(self.x.astype(np.float64), 40, 5), want)
        np.testing.assert_array_equal(self.m.denoise(self.x.tolist(), 40, 5), want)  # Python floats: float64
        x16 = self.x.astype(np.float16)
        np.testing.assert_array_equal(self.m.denoise(x16, 40, 5), self.m.denoise(x16.astype(np.float32), 40, 5))

    def test_other_dtypes_refused_naming_the_dtype(self):
        for dt in (np.complex64, np.complex128, np.int32, np.int64, np.uint8, np.bool_, np.longdouble, object, "U8"):
            name = str(np.dtype(dt))
            if name == "float64":  # a platform whose long double is double
                continue
            a = self.x.astype(dt)
            with self.subTest(dtype=name), self.assertRaises(ValueError) as e:
                self.m.denoise(a, 300, 20)
            self.assertTrue(str(e.exception).startswith("x has dtype %s; valid: a float16, float32 or float64 array"
                                                        % name), str(e.exception))
            with self.subTest("mlp3", dtype=name), self.assertRaises(ValueError) as e:
                diffscope.mlp3(golden("mlp3_b16_48_64_40_24_weights.safetensors"), np.ones((2, 48)).astype(dt))
            self.assertIn("x has dtype " + name, str(e.exception))
        with self.assertRaises(ValueError) as e:  # a list of Python ints is an int64 array: refused as well
            self.m.denoise([[1, 2]], 40, 5)
        self.assertIn("x has dtype int64", str(e.exception))

    def test_empty_and_wrong_rank(self):
        for a, msg in [(np.zeros((0, 2)), "x is empty (shape (0, 2)); valid: "),
                       (np.zeros((0, 2), np.float32), "x is empty (shape (0, 2)); valid: "),
                       (np.zeros(4, np.float32), "x has 1 dimensions (shape (4,)); valid: "),
                       (np.zeros((1, 2, 2), np.float32), "x has 3 dimensions (shape (1, 2, 2)); valid: ")]:
            with self.subTest(msg), self.assertRaises(ValueError) as e:
                self.m.denoise(a, 40, 5)
            self.assertTrue(str(e.exception).startswith(msg), str(e.exception))

    def test_t_start_unsigned_and_refused_kinds(self):
        for t, msg in [(np.array([2**64 - 1] * 6, np.uint64), "t_start[0] = 18446744073709551615 is out of range"),
                       (np.uint64(2**64 - 1), "t_start = 18446744073709551615 is out of range"),
                       (2**70, "t_start = 1180591620717411303424 is out of range"),
                       (np.array([5, 5, 5, 5, 5, 2**63], np.uint64), "t_start[5] = 9223372036854775808 is out of range")]:
            with self.subTest(msg), self.assertRaises(ValueError) as e:
                self.m.denoise(self.x, t, 20)
            self.assertTrue(str(e.exception).startswith(msg + "; valid: [0, 999]"), str(e.exception))
        for bad, name in [(np.full(6, 40, np.complex64), "complex64"), (np.full(6, True), "bool"),
                          (np.array(["40"] * 6), "<U2"), (np.full(6, 40.0), "float64")]:
            with self.subTest(name), self.assertRaises(ValueError) as e:
                self.m.denoise(self.x, bad, 20)
            self.assertIn("(dtype %s) is not an int or a 1-D integer array" % name, str(e.exception))

    def test_same_rule_as_the_cli(self):
        """float16 x: the CLI and the module agree bit for bit; int32 and complex x: both refuse, naming the dtype."""
        with tempfile.TemporaryDirectory() as d:
            x16 = self.x.astype(np.float16)
            np.save(os.path.join(d, "x16.npy"), x16)
            np.save(os.path.join(d, "t.npy"), np.full(6, 40, np.int64))
            rc, err = cli("denoise", "--model", "moons", "--x", os.path.join(d, "x16.npy"), "--t-start",
                          os.path.join(d, "t.npy"), "--steps", 5, "--out", os.path.join(d, "y.npy"))
            self.assertEqual(rc, 0, err)
            np.testing.assert_array_equal(np.load(os.path.join(d, "y.npy")), self.m.denoise(x16, 40, 5))
            for dt, descr in [(np.int32, "<i4"), (np.complex64, "<c8")]:
                np.save(os.path.join(d, "xi.npy"), self.x.astype(dt))
                rc, err = cli("denoise", "--model", "moons", "--x", os.path.join(d, "xi.npy"), "--t-start",
                              os.path.join(d, "t.npy"), "--steps", 5, "--out", os.path.join(d, "z.npy"))
                self.assertEqual(rc, 2, err)
                self.assertIn("dtype '%s'" % descr, err)
                with self.assertRaises(ValueError):
                    self.m.denoise(self.x.astype(dt), 40, 5)


class Threads(unittest.TestCase):
    """diffscope.set_threads: results do not depend on the thread count, bit for bit; its range is checked."""

    def tearDown(self):
        diffscope.set_threads(None)

    def test_results_do_not_depend_on_threads(self):
        m = diffscope.load("moons")
        rng = np.random.default_rng(4)
        x = rng.standard_normal((1500, 2)).astype(np.float32)  # 6 blocks of 256 rows
        t = rng.integers(0, 1000, 1500)
        w = golden("mlp3_b16_48_64_40_24_weights.safetensors")
        xw = rng.standard_normal((1100, 48)).astype(np.float32)
        runs = []
        for threads in (1, 2, 3, 8, None):
            diffscope.set_threads(threads)
            runs.append((m.sample(3000, sampler="ddpm", steps=30, t_start=600, seed=9, trajectory=True,
                                  trajectory_stride=7),
                         m.sample(2000, sampler="dpmpp-2m", steps=12, seed=1, from_data=False),
                         m.denoise(x, t, 50, trajectory=True), diffscope.mlp3(w, xw)))
        for threads, run in zip((2, 3, 8, None), runs[1:]):
            with self.subTest(threads=threads):
                for a, b in zip(run, runs[0]):
                    for u, v in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
                        np.testing.assert_array_equal(u, v)

    def test_range_and_kinds(self):
        diffscope.set_threads(np.int64(2))
        self.assertEqual(diffscope.get_threads(), 2)
        diffscope.set_threads(None)
        self.assertGreaterEqual(diffscope.get_threads(), 1)
        for bad in (0, -1, 1025, 2**70):
            with self.subTest(bad), self.assertRaises(ValueError) as e:
                diffscope.set_threads(bad)
            self.assertEqual(str(e.exception), "threads = %d is out of range; valid: [1, 1024]" % bad)
        for bad in (1.5, True, "2"):
            with self.subTest(repr(bad)), self.assertRaises(ValueError) as e:
                diffscope.set_threads(bad)
            self.assertTrue(str(e.exception).startswith("threads = %r is not an int" % bad), str(e.exception))

    def test_cli_threads_option(self):
        with tempfile.TemporaryDirectory() as d:
            outs = []
            for threads in (1, 2, 5):
                out = os.path.join(d, "x%d.npy" % threads)
                rc, err = cli("sample", "--model", "moons", "--n", 1500, "--sampler", "ddpm", "--steps", 20,
                              "--t-start", 300, "--seed", 3, "--threads", threads, "--out", out)
                self.assertEqual(rc, 0, err)
                outs.append(np.load(out))
            for o in outs[1:]:
                np.testing.assert_array_equal(o, outs[0])
            for cmd in (["sample", "--model", "moons", "--out", os.path.join(d, "y.npy")],
                        ["mlp3", "--weights", golden("mlp3_b16_48_64_40_24_weights.safetensors"), "--x",
                         golden("mlp3_b16_48_64_40_24_x.npy"), "--out", os.path.join(d, "y.npy")],
                        ["bench", "--quick"]):
                for bad in ("0", "1025"):
                    with self.subTest(cmd=cmd[0], threads=bad):
                        rc, err = cli(*cmd, "--threads", bad)
                        self.assertEqual(rc, 2, err)
                        self.assertIn("--threads = %s is out of range; valid: [1, 1024]" % bad, err)
            rc, err = cli("sample", "--model", "moons", "--threads", "two", "--out", os.path.join(d, "y.npy"))
            self.assertEqual(rc, 2)
            self.assertIn("--threads = 'two' is not an integer; valid: [1, 1024]", err)
            self.assertFalse(os.path.exists(os.path.join(d, "y.npy")))


# Run in a fresh interpreter (argv[1]: mlp3 weights, argv[2]: the mlp3 x .npy): one sample() to start the CPU
# backend's threads, then one forked child per call; each child runs the call and reports (equal to the parent's
# result, seconds). A child that hangs never reports: the test's timeout ends the whole process group.
FORK_SCRIPT = r"""
import json, os, sys, time
import numpy as np
import diffscope
m = diffscope.load("moons")
m.sample(4096, steps=5, t_start=4)
x = np.ones((4096, 2), np.float32)
xw = np.load(sys.argv[2])
calls = {
    "sample": lambda: m.sample(4096, steps=5, t_start=4, seed=1),
    "denoise": lambda: m.denoise(x, 10, 3),
    "mlp3": lambda: diffscope.mlp3(sys.argv[1], xw),
    "load": lambda: diffscope.load("moons").sample(4096, steps=5, t_start=4, seed=1),
}
for name, call in calls.items():
    want = call()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        t0 = time.perf_counter()
        y = call()
        os.write(w, json.dumps([bool(np.array_equal(y, want)), time.perf_counter() - t0]).encode())
        os._exit(0)
    os.close(w)
    got = json.loads(os.read(r, 4096).decode())
    os.waitpid(pid, 0)
    print(json.dumps({name: got}), flush=True)
import multiprocessing
def pool_call(name):
    return calls[name]()
with multiprocessing.get_context("fork").Pool(2) as pool:
    outs = pool.map(pool_call, list(calls))
print(json.dumps({"pool": [all(bool(np.array_equal(o, calls[n]())) for o, n in zip(outs, calls)), 0.0]}), flush=True)
"""


class Fork(unittest.TestCase):
    """A child forked after the CPU backend ran (multiprocessing's default start method on Linux, DataLoader
    workers) computes sample, denoise, mlp3 and a fresh load, equal to the parent's results, and never hangs."""

    def test_calls_in_a_forked_child(self):
        import signal
        c = next(c for c in MANIFEST if c["kind"] == "mlp3")
        p = subprocess.Popen([sys.executable, "-c", FORK_SCRIPT, golden(c["weights"]), golden(c["x"])],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)  # the parent and its hung children
            out, err = p.communicate()
            self.fail("a forked child hung; it reported only: " + out)
        self.assertEqual(p.returncode, 0, err)
        results = {}
        for line in out.splitlines():
            results.update(json.loads(line))
        self.assertEqual(sorted(results), ["denoise", "load", "mlp3", "pool", "sample"])
        for name, (same, seconds) in results.items():
            with self.subTest(name):
                self.assertTrue(same, "the child's result differs from the parent's")
                self.assertLess(seconds, 10.0)  # measured: well under a second (tests/RELIABILITY.md)


class Train(unittest.TestCase):
    """diffscope.train (docs/SEMANTICS.md §11): the Model it returns, the CLI's file bit for bit, resume, errors."""

    def test_returns_the_model_and_writes_the_clis_file(self):
        with tempfile.TemporaryDirectory() as d:
            kw = dict(objective="flow", hidden=64, batch=64, steps=12, seed=3)
            m = diffscope.train("moons", os.path.join(d, "py.safetensors"), **kw)
            self.assertEqual((m.dim, m.hidden), (2, 64))
            code, err = cli("train", "--quiet", "--data", "moons", "--objective", "flow", "--hidden", 64, "--batch", 64,
                            "--steps", 12, "--seed", 3, "--out", os.path.join(d, "cli.safetensors"))
            self.assertEqual(code, 0, err)
            a = diffscope.load(os.path.join(d, "py.safetensors")).sample(8, steps=4, seed=0)
            b = diffscope.load(os.path.join(d, "cli.safetensors")).sample(8, steps=4, seed=0)
            np.testing.assert_array_equal(a, b)

    def test_ctrl_c_writes_the_last_step_and_resume_continues_the_run(self):
        x = np.random.default_rng(0).standard_normal((300, 3)) * [1.0, 2.0, 3.0]
        kw = dict(hidden=64, batch=32, steps=8)
        with tempfile.TemporaryDirectory() as d:
            calls = []
            diffscope.train(x, os.path.join(d, "a.safetensors"), progress=lambda s, t, l: calls.append((s, t)), **kw)
            self.assertEqual(calls[-1], (8, 8))

            def interrupt_at_4(step, total, loss):
                if step == 4:
                    os.kill(os.getpid(), signal.SIGINT)
            with self.assertRaises(KeyboardInterrupt):
                diffscope.train(x, os.path.join(d, "b.safetensors"), progress=interrupt_at_4, **kw)
            stopped = diffscope.load(os.path.join(d, "b.safetensors"))
            self.assertEqual(stopped.hidden, 64)
            diffscope.train(x, os.path.join(d, "c.safetensors"), resume=os.path.join(d, "b.ckpt.safetensors"))
            a = diffscope.load(os.path.join(d, "a.safetensors")).sample(8, steps=4, seed=0)
            c = diffscope.load(os.path.join(d, "c.safetensors")).sample(8, steps=4, seed=0)
            np.testing.assert_array_equal(a, c)

    def test_bad_arguments_raise_value_error(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "m.safetensors")
            for kw, words in ((dict(data=np.full((4, 2), np.nan)), ["data", "nan", "row 0, column 0"]),
                              (dict(data=np.zeros((5, 65))), ["dim 65", "[1, 64]"]),
                              (dict(data="moons", hidden=32), ["hidden", "32", "[64, 512]"]),
                              (dict(data="moons", objective="edm"), ["objective", "edm"]),
                              (dict(data="moons", resume=out, lr=0.1), ["lr", "resume"]),
                              (dict(data="moons", backend="gpu"), ["backend", "'gpu'", "'cpu', 'cuda'"]),
                              (dict(data="moons", precision="fp16"), ["precision", "'fp16'", "'fp32', 'bf16'"]),
                              (dict(data="moons", precision="bf16"), ["precision", "'bf16'", "backend = 'cuda'"])):
                with self.assertRaises(ValueError) as e:
                    diffscope.train(out=out, **kw)
                for w in words:
                    self.assertIn(w, str(e.exception))
            self.assertEqual(os.listdir(d), [])

    def test_cuda_backend_trains_or_says_why_not(self):
        """backend='cuda': where no device is usable a RuntimeError naming backend and what to use, nothing
        written; on a GPU the model the CPU trainer gives, to float32 rounding (SEMANTICS §11 "Backends")."""
        with tempfile.TemporaryDirectory() as d:
            kw = dict(objective="flow", hidden=64, batch=64, steps=12, seed=3)
            if not diffscope.cuda_available():
                with self.assertRaises(RuntimeError) as e:
                    diffscope.train("moons", os.path.join(d, "g.safetensors"), backend="cuda", **kw)
                self.assertIn("backend = 'cpu'", str(e.exception))
                self.assertEqual(os.listdir(d), [])
                return
            g = diffscope.train("moons", os.path.join(d, "g.safetensors"), backend="cuda", **kw)
            c = diffscope.train("moons", os.path.join(d, "c.safetensors"), **kw)
            a, b = g.sample(64, steps=4, seed=0), c.sample(64, steps=4, seed=0)
            np.testing.assert_allclose(a, b, rtol=0, atol=5e-3)


class Gil(unittest.TestCase):
    def test_released_during_compute(self):
        """While one thread samples, another keeps running Python: with the GIL held for the whole compute,
        the longest pause between the ticks below would be the compute's duration."""
        m = diffscope.load("swissroll")
        t0 = time.perf_counter()
        m.sample(2000, steps=40)
        compute = time.perf_counter() - t0
        th = threading.Thread(target=lambda: m.sample(2000, steps=40))
        ticks = [time.perf_counter()]
        th.start()
        while th.is_alive():
            ticks.append(time.perf_counter())
        th.join()
        longest = max(np.diff(ticks)) if len(ticks) > 1 else float("inf")
        self.assertLess(longest, 0.5 * compute, f"longest pause {longest:.3f} s, compute {compute:.3f} s")


if __name__ == "__main__":
    print("diffscope module:", diffscope.__file__, file=sys.stderr)
    unittest.main(verbosity=1)

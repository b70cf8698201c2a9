"""test_objectives.py — the training objectives of tools/objectives.py (ctest `tools_objectives`, numpy only):
each family's state and target at hand-computed levels, and the output maps of SEMANTICS §2 giving x0 and eps
back from the target, in float64."""
import pathlib
import sys
import unittest

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import objectives  # noqa: E402


class Objectives(unittest.TestCase):
    x0, eps = 1.0, 2.0

    def test_vp_targets_at_abar_0_36(self):
        # abar = 0.36: alpha = 0.6, sigma = 0.8; x = 0.6 * 1 + 0.8 * 2 = 2.2; v = 0.6 * 2 - 0.8 * 1 = 0.4.
        a, s = objectives.vp_level(0.36)
        self.assertAlmostEqual(a, 0.6, places=15)
        self.assertAlmostEqual(s, 0.8, places=15)
        self.assertAlmostEqual(objectives.noised(self.x0, self.eps, a, s), 2.2, places=15)
        self.assertEqual(objectives.target("epsilon", self.x0, self.eps, a, s), 2.0)
        self.assertEqual(objectives.target("sample", self.x0, self.eps, a, s), 1.0)
        self.assertAlmostEqual(objectives.target("v_prediction", self.x0, self.eps, a, s), 0.4, places=15)

    def test_flow_target_at_s_quarter(self):
        # s = 0.25: x = 0.75 * 1 + 0.25 * 2 = 1.25; v = eps - x0 = 1, whatever s.
        a, s = objectives.flow_level(0.25)
        self.assertEqual((a, s), (0.75, 0.25))
        self.assertEqual(objectives.noised(self.x0, self.eps, a, s), 1.25)
        self.assertEqual(objectives.target("flow", self.x0, self.eps, a, s), 1.0)
        self.assertEqual(objectives.target("flow", 3.0, -1.0, *objectives.flow_level(0.9)), -4.0)

    def test_output_maps_invert_the_targets(self):
        rng = np.random.default_rng(26)
        x0, eps = rng.normal(size=(2, 1000, 2))
        levels = {"vp": objectives.vp_level(rng.uniform(1e-4, 1 - 1e-4, size=(1000, 1))),
                  "flow": objectives.flow_level(rng.uniform(1e-3, 1 - 1e-3, size=(1000, 1)))}
        for obj in objectives.OBJECTIVES:
            a, s = levels["flow" if obj == "flow" else "vp"]
            x = objectives.noised(x0, eps, a, s)
            D, e = objectives.output_to_data_and_eps(obj, x, objectives.target(obj, x0, eps, a, s), a, s)
            np.testing.assert_allclose(D, x0, rtol=0, atol=1e-9, err_msg=obj)
            np.testing.assert_allclose(e, eps, rtol=0, atol=1e-9, err_msg=obj)

    def test_v_is_the_derivative_of_the_state_in_the_angle(self):
        # Salimans & Ho 2022 §4: with alpha = cos phi, sigma = sin phi, v = d x_phi / d phi.
        phi, h = 0.7, 1e-6

        def x(p):
            return objectives.noised(self.x0, self.eps, np.cos(p), np.sin(p))
        v = objectives.target("v_prediction", self.x0, self.eps, np.cos(phi), np.sin(phi))
        self.assertAlmostEqual(v, (x(phi + h) - x(phi - h)) / (2 * h), places=8)

    def test_flow_velocity_is_the_derivative_in_s(self):
        s, h = 0.3, 1e-6

        def x(q):
            return objectives.noised(self.x0, self.eps, *objectives.flow_level(q))
        self.assertAlmostEqual(objectives.target("flow", self.x0, self.eps, *objectives.flow_level(s)),
                               (x(s + h) - x(s - h)) / (2 * h), places=8)

    def test_names(self):
        self.assertEqual(objectives.check_objective("flow"), "flow")
        with self.assertRaisesRegex(ValueError, "'flow_prediction' .valid: epsilon, sample, v_prediction, flow"):
            objectives.check_objective("flow_prediction")
        self.assertEqual([objectives.FILE_SUFFIX[o] for o in objectives.OBJECTIVES], ["", "_sample", "_v", "_flow"])


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""test_python_stubs.py — the type stubs of the Python package (python/diffscope/*.pyi) against the runtime
module, so that they cannot drift: the same public names, the same parameters (names, order, defaults) as
pybind11's signatures, the same docstrings word for word, property types that the values have; the docstrings
name only documentation the package installs. With mypy installed (Debian's mypy), `mypy --strict` accepts the
stubs and a typed example, and rejects wrongly typed calls.

Environment (set by tests/install/CMakeLists.txt): PYTHONPATH with the built package, DIFFSCOPE_ROOT the
repository.
"""
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np

import diffscope
from diffscope import _diffscope

ROOT = os.environ["DIFFSCOPE_ROOT"]
PKG = os.path.dirname(os.path.abspath(diffscope.__file__))
CUDA_ONLY = {"CudaArray"}  # exported by a CUDA build only; the stub declares it always
CLASS_DEFAULTS = {"__init__", "__doc__", "__module__", "__dict__", "__weakref__"}


def stub_tree(name):
    with open(os.path.join(PKG, name), encoding="utf-8") as f:
        return ast.parse(f.read(), name)


def top_level_names(tree):
    """Names a stub declares at module level: defs, classes, public assignments and `import ... as NAME`."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name) and not t.id.startswith("_"))
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname for a in node.names if a.asname)
    return names


def functions(body):
    """{name: [FunctionDef, ...]} (several for an @overload)."""
    out = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            out.setdefault(node.name, []).append(node)
    return out


def is_property(fn):
    return any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list)


def split_top_level(text):
    """Splits at the commas outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


NO_DEFAULT = object()


def runtime_parameters(obj, name, method):
    """[(name, default or NO_DEFAULT)] from pybind11's signature line, `name(a: T, b: T = 1) -> R`."""
    line = obj.__doc__.splitlines()[0]
    m = re.fullmatch(re.escape(name) + r"\((.*)\) -> .*", line)
    if not m:
        raise AssertionError(f"{name}: no pybind11 signature line: {line!r}")
    params = []
    for p in split_top_level(m.group(1)):
        head, _, default = p.partition(" = ")
        params.append((head.split(":")[0].strip(), ast.literal_eval(default) if default else NO_DEFAULT))
    return params[1:] if method else params


def runtime_docstring(obj, function):
    """The docstring without pybind11's signature line (functions and methods)."""
    doc = obj.__doc__ or ""
    if function:
        doc = doc.split("\n", 1)[1] if "\n" in doc else ""
    return doc.strip()


def is_function(obj):
    return callable(obj) and not isinstance(obj, (type, property))


def stub_docstring(defs):
    docs = [ast.get_docstring(d, clean=False) for d in defs]
    docs = [d for d in docs if d]
    return docs[0].strip() if len(docs) == 1 else docs


def stub_defaults(fn):
    a = fn.args
    pos = a.posonlyargs + a.args
    defaults = [NO_DEFAULT] * (len(pos) - len(a.defaults)) + list(a.defaults)
    out = list(zip(pos, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))
    return [(arg.arg, NO_DEFAULT if d is None else d) for arg, d in out]


def runtime_members(cls):
    """{name: 'property' | 'method'} of a bound class (pybind11's own entries left out)."""
    out = {}
    for k, v in vars(cls).items():
        if k in CLASS_DEFAULTS:
            continue
        out[k] = "property" if isinstance(v, property) else "method"
    return out


def every_object():
    """(where, object) of the package and every object of the extension, class members included."""
    yield "diffscope", diffscope
    for name in dir(_diffscope):
        obj = getattr(_diffscope, name)
        if name.startswith("__"):
            continue
        yield name, obj
        if isinstance(obj, type):
            for k in runtime_members(obj):
                yield f"{name}.{k}", vars(obj)[k]


class Files(unittest.TestCase):
    def test_stubs_and_marker_beside_the_module(self):
        for f in ("__init__.pyi", "_diffscope.pyi", "py.typed"):
            self.assertTrue(os.path.isfile(os.path.join(PKG, f)), f"{f} is not in {PKG}")


class Names(unittest.TestCase):
    def test_package(self):
        runtime = {n for n in dir(diffscope) if not n.startswith("_")} | {"__version__"}
        stub = {n for n in top_level_names(stub_tree("__init__.pyi")) if not n.startswith("_") or n == "__version__"}
        missing_at_runtime = stub - runtime
        if not hasattr(_diffscope, "CudaArray"):
            missing_at_runtime -= CUDA_ONLY
        self.assertEqual(runtime - stub, set(), "exported but not in __init__.pyi")
        self.assertEqual(missing_at_runtime, set(), "in __init__.pyi but not exported")

    def test_extension(self):
        runtime = {n for n in dir(_diffscope) if not n.startswith("__")}
        stub = top_level_names(stub_tree("_diffscope.pyi"))
        self.assertEqual(runtime - stub, set(), "in _diffscope but not in _diffscope.pyi")
        extra = stub - runtime
        if not hasattr(_diffscope, "CudaArray"):
            extra -= CUDA_ONLY
        self.assertEqual(extra, set(), "in _diffscope.pyi but not in _diffscope")

    def test_class_members(self):
        classes = {c.name: c for c in stub_tree("_diffscope.pyi").body if isinstance(c, ast.ClassDef)}
        for name, node in classes.items():
            if not hasattr(_diffscope, name):
                continue
            with self.subTest(name):
                stub = {k: "property" if is_property(defs[0]) else "method" for k, defs in functions(node.body).items()}
                self.assertEqual(stub, runtime_members(getattr(_diffscope, name)))


class Signatures(unittest.TestCase):
    def check(self, where, obj, defs, method):
        runtime = runtime_parameters(obj, obj.__name__, method)
        want_names = [n for n, _ in runtime]
        want_default = dict(runtime)
        for i, fn in enumerate(defs):
            a = fn.args
            self.assertIsNone(a.vararg, f"{where}: *args")
            self.assertIsNone(a.kwarg, f"{where}: **kwargs")
            params = stub_defaults(fn)[1:] if method else stub_defaults(fn)
            self.assertEqual([n for n, _ in params], want_names, f"{where}: parameter names (stub {i + 1})")
            for n, d in params:
                if d is NO_DEFAULT or (isinstance(d, ast.Constant) and d.value is Ellipsis):
                    continue
                self.assertIsNot(want_default[n], NO_DEFAULT, f"{where}: {n} has no default at runtime")
                self.assertEqual(repr(ast.literal_eval(d)), repr(want_default[n]), f"{where}: default of {n}")
        # The last (or only) signature is the general one: positional like the binding, defaults where it has them.
        last = defs[-1]
        self.assertEqual(last.args.kwonlyargs, [], f"{where}: the general signature has keyword-only parameters")
        have_default = {n for n, d in (stub_defaults(last)[1:] if method else stub_defaults(last)) if d is not NO_DEFAULT}
        self.assertEqual(have_default, {n for n, d in runtime if d is not NO_DEFAULT}, f"{where}: parameters with defaults")

    def test_functions_and_methods(self):
        tree = stub_tree("_diffscope.pyi")
        for name, defs in functions(tree.body).items():
            with self.subTest(name):
                self.assertTrue(hasattr(_diffscope, name), f"{name} is not in _diffscope")
                self.check(name, getattr(_diffscope, name), defs, method=False)
        for cls in (c for c in tree.body if isinstance(c, ast.ClassDef) and hasattr(_diffscope, c.name)):
            for name, defs in functions(cls.body).items():
                if is_property(defs[0]):
                    continue
                with self.subTest(f"{cls.name}.{name}"):
                    self.check(f"{cls.name}.{name}", getattr(getattr(_diffscope, cls.name), name), defs, method=True)


class Docstrings(unittest.TestCase):
    def test_stub_docstrings_are_the_runtime_ones(self):
        tree = stub_tree("_diffscope.pyi")
        for name, defs in functions(tree.body).items():
            with self.subTest(name):
                self.assertTrue(hasattr(_diffscope, name), f"{name} is not in _diffscope")
                self.assertEqual(stub_docstring(defs), runtime_docstring(getattr(_diffscope, name), True))
        for cls in (c for c in tree.body if isinstance(c, ast.ClassDef) and hasattr(_diffscope, c.name)):
            rt = getattr(_diffscope, cls.name)
            self.assertEqual(ast.get_docstring(cls, clean=False).strip(), runtime_docstring(rt, False))
            for name, defs in functions(cls.body).items():
                with self.subTest(f"{cls.name}.{name}"):
                    self.assertEqual(stub_docstring(defs), runtime_docstring(getattr(rt, name), not is_property(defs[0])))

    def test_every_object_has_one(self):
        for where, obj in every_object():
            with self.subTest(where):
                self.assertGreater(len(runtime_docstring(obj, is_function(obj))), 10, f"{where}: no docstring")

    def test_cited_documentation_is_installed(self):
        """README.md and docs/... are installed as in the repository (packaging/CMakeLists.txt): each cited file
        exists, each cited section of SEMANTICS.md is a heading there, and no § stands without its file."""
        with open(os.path.join(ROOT, "docs", "SEMANTICS.md"), encoding="utf-8") as f:
            sections = set(re.findall(r"^## (\d+)\.", f.read(), re.M))
        for where, obj in every_object():
            doc = obj.__doc__ or ""
            with self.subTest(where):
                for path in re.findall(r"\b(README\.md|docs/[\w/.-]+\.(?:md|py))\b", doc):
                    self.assertTrue(os.path.isfile(os.path.join(ROOT, path)), f"{where} cites {path}")
                rest = doc
                for cite in re.findall(r"docs/SEMANTICS\.md (§\d+(?:(?:-| and )§\d+)*)", doc):
                    for n in re.findall(r"§(\d+)", cite):
                        self.assertIn(n, sections, f"{where} cites SEMANTICS.md §{n}")
                    rest = rest.replace(cite, "")
                self.assertNotIn("§", rest, f"{where}: a § without docs/SEMANTICS.md")
                self.assertNotRegex(rest, r"SEMANTICS(?!\.md)", f"{where}: SEMANTICS without its path")


class PropertyTypes(unittest.TestCase):
    """Each property's stub annotation against the value of a loaded model."""
    CHECKS = {
        "str": lambda v: isinstance(v, str),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "npt.NDArray[np.float64]": lambda v: isinstance(v, np.ndarray) and v.dtype == np.float64,
        "_Float32": lambda v: isinstance(v, np.ndarray) and v.dtype == np.float32,
    }

    def test_model(self):
        model = diffscope.load("moons")
        cls = next(c for c in stub_tree("_diffscope.pyi").body if isinstance(c, ast.ClassDef) and c.name == "Model")
        for name, defs in functions(cls.body).items():
            if not is_property(defs[0]):
                continue
            with self.subTest(name):
                annotation = ast.unparse(defs[0].returns)
                self.assertIn(annotation, self.CHECKS, f"Model.{name}: add a check for {annotation}")
                self.assertTrue(self.CHECKS[annotation](getattr(model, name)), f"Model.{name} is not {annotation}")


EXAMPLE = """
from typing import assert_type

import numpy as np
import numpy.typing as npt

import diffscope

model = diffscope.load("moons")
x = model.sample(64, steps=10, seed=1)
assert_type(x, npt.NDArray[np.float32])
x2, trajectory = model.sample(64, steps=10, trajectory=True, trajectory_stride=5)
assert_type(trajectory, npt.NDArray[np.float32])
y = model.denoise(x, t_start=5, steps=3)
assert_type(y, npt.NDArray[np.float32])
names: list[str] = diffscope.bundled_models()
threads: int = diffscope.get_threads()
schedule: npt.NDArray[np.float64] = model.alphas_cumprod
dim: int = model.dim
family: str = model.prediction_type
convention: str = model.convention
x3 = model.sample(16, sigmas=[14.6, 5.2, 0.0], prediction_type=None, flow_shift=None, flow_mu=None)
assert_type(x3, npt.NDArray[np.float32])
version: str = diffscope.__version__
assert x.dtype == np.float32 and x.shape == (64, model.dim)
assert trajectory.shape == (3, 64, model.dim) and np.array_equal(x2, trajectory[-1])
assert y.dtype == np.float32 and y.shape == x.shape and "moons" in names and threads >= 1
"""

# Each line a call the stubs refuse, with the error code mypy gives.
WRONG = {
    'diffscope.load(3)': "arg-type",
    'model.sample(steps="ten")': "call-overload",
    'model.sample(trajectory=True).shape': "attr-defined",
    'model.sample().numpy()': "attr-defined",
    'model.sample(typo=1)': "call-overload",
    'diffscope.set_threads("4")': "arg-type",
    'model.sample(sigmas="14.6,0")': "arg-type",
    'model.sample(prediction_type=1)': "call-overload",
}


@unittest.skipUnless(shutil.which("mypy"), "mypy is not installed (Debian: mypy)")
class Mypy(unittest.TestCase):
    def mypy(self, folder, *args):
        path = os.pathsep.join([os.path.dirname(PKG)] + os.environ.get("PYTHONPATH", "").split(os.pathsep))
        env = dict(os.environ, MYPY_CACHE_DIR=os.path.join(folder, ".mypy_cache"), PYTHONPATH=path)
        return subprocess.run(["mypy", "--strict", "--no-error-summary", "--python-executable", sys.executable, *args],
                              capture_output=True, text=True, cwd=folder, env=env)

    def test_stubs_are_strict(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = self.mypy(tmp, os.path.join(PKG, "__init__.pyi"), os.path.join(PKG, "_diffscope.pyi"))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_typed_example(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "example.py")
            with open(path, "w") as f:
                f.write(EXAMPLE)
            r = self.mypy(tmp, path)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            subprocess.run([sys.executable, path], check=True)  # the types it asserts are the values'

    def test_wrong_calls_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "wrong.py")
            lines = ["import diffscope", 'model = diffscope.load("moons")', *WRONG]
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            r = self.mypy(tmp, path)
            for n, (call, code) in enumerate(WRONG.items(), start=3):
                with self.subTest(call):
                    self.assertRegex(r.stdout, rf"wrong\.py:{n}: error: .*\[{code}\]")


if __name__ == "__main__":
    unittest.main(verbosity=2)

#!/usr/bin/env python3
"""check_doc_paths.py — every source file the design documents name exists (ctest `doc_paths`).

Reads docs/*.md, docs/decisions/*.md, README.md and tests/RELIABILITY.md; finds each path to a source file
(`app/run/backend.h`, `session/settings_io.h`, `python/module.cpp`, `kernels/plan/kernel_plan.h`, with a brace
list such as `cpu_threads.{h,cpp}` expanded) and checks it exists in the repository, as written or under app/.
Prints each missing path with the document and line; exit 1 when any is missing.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = sorted([*ROOT.glob("docs/*.md"), *ROOT.glob("docs/decisions/*.md"), ROOT / "README.md",
               ROOT / "tests" / "RELIABILITY.md"])
EXT = r"(?:h|cpp|cu|cuh|py|sh|txt|glsl|vert|frag|comp|pyi)"
PATH = re.compile(r"(?<![\w./-])((?:[a-z0-9_]+/)+[A-Za-z0-9_.-]+?\.(?:\{[a-z,]+\}|" + EXT + r"))(?![\w/])")
ROOMS = {p.name for p in (ROOT / "app").iterdir() if p.is_dir()} | {"core"}  # core: the folder before the rooms
TOP = {"app", "kernels", "python", "shaders", "scripts", "tests", "tools", "bench", "packaging", "docs", "assets"}


def expand(path):
    m = re.search(r"\{([a-z,]+)\}", path)
    if not m:
        return [path]
    return [path[:m.start()] + e + path[m.end():] for e in m.group(1).split(",")]


def candidates(path):
    first = path.split("/", 1)[0]
    if first in TOP:
        return [ROOT / path]
    if first in ROOMS:
        return [ROOT / "app" / path]
    if first == "plan":
        return [ROOT / "kernels" / path]
    return None  # not a path into the tree (a URL piece, a path on the user's machine)


def main():
    missing = []
    checked = 0
    for doc in DOCS:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for m in PATH.finditer(line):
                for p in expand(m.group(1)):
                    c = candidates(p)
                    if c is None:
                        continue
                    checked += 1
                    if not any(x.exists() for x in c):
                        missing.append(f"{doc.relative_to(ROOT)}:{n}: {p} does not exist")
    for m in missing:
        print(m)
    print(f"doc_paths: {checked} paths checked, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())

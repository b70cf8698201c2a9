#!/usr/bin/env bash
# install_prefix.sh BUILD_DIR — `cmake --install` into a fresh prefix, then from another folder and without
# DIFFSCOPE_ROOT: the CLI finds its bundled models (<exe>/../share/diffscope), the desktop entry, the mime
# XML and the icons are where freedesktop.org's specs look, and the installed Python module imports.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/diffscope-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset DIFFSCOPE_ROOT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
mkdir "$tmp/elsewhere" && cd "$tmp/elsewhere"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$tmp/prefix/bin/diffscope" sample --model moons --n 64 --steps 20 --out x.npy || fail "installed sample --model moons"
[ -s x.npy ] || fail "no x.npy"
"$tmp/prefix/bin/diffscope" info --model swissroll >/dev/null || fail "installed info --model swissroll"
for f in share/applications/diffscope.desktop share/mime/packages/diffscope.xml \
         share/icons/hicolor/16x16/apps/diffscope.png share/icons/hicolor/256x256/apps/diffscope.png \
         share/diffscope/assets/models/moons.safetensors share/diffscope/assets/models/README.md; do
  [ -s "$tmp/prefix/$f" ] || fail "missing $f"
done
# The README once, as itself (docs/README.md, the docs index, was installed over it), the docs beside it.
doc="$tmp/prefix/share/doc/diffscope"
cmp -s "$doc/README.md" "$src/README.md" || fail "share/doc/diffscope/README.md is not README.md"
cmp -s "$doc/docs/README.md" "$src/docs/README.md" || fail "share/doc/diffscope/docs/README.md is not docs/README.md"
[ -s "$doc/docs/SEMANTICS.md" ] || fail "missing share/doc/diffscope/docs/SEMANTICS.md (README links docs/SEMANTICS.md)"
grep -c "README.md" "$build/install_manifest.txt" | grep -qx 3 || fail "README.md installed $(grep -c README.md "$build/install_manifest.txt") times; want README.md, docs/README.md, assets/models/README.md"
grep -qx 'Exec=diffscope %f' "$tmp/prefix/share/applications/diffscope.desktop" || fail "Exec line"
grep -qx 'MimeType=application/x-safetensors;' "$tmp/prefix/share/applications/diffscope.desktop" || fail "MimeType"
if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate "$tmp/prefix/share/applications/diffscope.desktop" || fail "desktop-file-validate"
fi
if command -v update-mime-database >/dev/null; then
  # The glob must reach the compiled database (shared-mime-info parses and accepts the XML).
  cp -r "$tmp/prefix/share/mime" "$tmp/mime"
  update-mime-database "$tmp/mime" >/dev/null 2>&1 || fail "update-mime-database"
  grep -q 'application/x-safetensors:\*\.safetensors' "$tmp/mime/globs" || fail "mime glob not compiled"
fi
# Each icon is a PNG of its folder's size (bytes 16..23 of the IHDR chunk: width, height big-endian).
for d in "$tmp"/prefix/share/icons/hicolor/*x*; do
  n=${d##*/}; n=${n%%x*}
  read -r w h < <(od -An -tu1 -j16 -N8 "$d/apps/diffscope.png" | awk '{print $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}')
  [ "$w" = "$n" ] && [ "$h" = "$n" ] || fail "icon $d is ${w}x$h"
done

# `diffscope FILE.safetensors` (the desktop entry's Exec=diffscope %f) opens the app on FILE: a dim-3 model
# (tests/data/golden/d3_h40, made by tools/make_golden.py) gives a (n, 3) state, the default model (moons) 2.
if "$tmp/prefix/bin/diffscope" gui --help >/dev/null 2>&1; then
  cp "$src/tests/data/golden/d3_h40.safetensors" "$tmp/my model.safetensors"
  printf 'set n 50\nset steps 5\nset t_start 100\nwait_complete 2000\nexport state %s\n' "$tmp/state.npy" >script.txt
  "$tmp/prefix/bin/diffscope" "$tmp/my model.safetensors" --headless --backend cpu --no-persist --size 64x64 \
    --script script.txt >/dev/null 2>&1 || fail "diffscope FILE.safetensors --headless"
  # bytes of the .npy header: the shape (50, 3)
  grep -q "'shape': (50, 3)" "$tmp/state.npy" || fail "diffscope FILE did not open FILE: $(head -c 120 "$tmp/state.npy")"
  # A missing FILE: the app still opens (a file manager launched it) and says which file it could not open.
  printf 'frames 1\n' >one.txt
  set +e
  "$tmp/prefix/bin/diffscope" "$tmp/missing.safetensors" --headless --backend cpu --no-persist --size 64x64 \
    --script one.txt >/dev/null 2>"$tmp/err"
  rc=$?
  set -e
  [ "$rc" -lt 128 ] && grep -q "missing.safetensors: cannot open" "$tmp/err" || fail "a missing FILE: exit $rc, $(cat "$tmp/err")"
fi

pydir=$(find "$tmp/prefix" -name '_diffscope*.so' -printf '%h\n' | head -1)
if [ -n "$pydir" ]; then
  for f in __init__.pyi _diffscope.pyi py.typed; do  # the type stubs (PEP 561), beside the module
    [ -f "$pydir/$f" ] || fail "the installed Python package has no $f"
  done
  PYTHONPATH=$(dirname "$pydir") /usr/bin/python3 -c '
import diffscope, numpy as np
m = diffscope.load("moons")
x = m.sample(64, steps=20)
assert x.shape == (64, 2) and x.dtype == np.float32
assert np.array_equal(x, np.load("x.npy")), "installed module differs from the installed CLI"
print("installed module ok:", m)
' || fail "installed Python module"
fi
echo "install_prefix: ok"

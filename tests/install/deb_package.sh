#!/usr/bin/env bash
# deb_package.sh BUILD_DIR — builds the .deb (CPack), checks its files and its dependencies (Debian 12
# packages, no CUDA library), unpacks it with dpkg -x into a fresh root and runs the CLI (and the Python
# module) from another folder without DIFFSCOPE_ROOT.
set -euo pipefail
build=$(cd "$1" && pwd)
tmp=$(mktemp -d /tmp/diffscope-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset DIFFSCOPE_ROOT
fail() { echo "FAIL: $*" >&2; exit 1; }
(cd "$build" && cpack -G DEB -B "$tmp/pkg" >/dev/null) || fail "cpack -G DEB"
deb=$(ls "$tmp"/pkg/diffscope_*.deb)
echo "package: ${deb##*/} ($(du -h "$deb" | cut -f1))"

contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/diffscope ./usr/share/diffscope/assets/models/moons.safetensors \
         ./usr/share/applications/diffscope.desktop ./usr/share/mime/packages/diffscope.xml \
         ./usr/share/icons/hicolor/48x48/apps/diffscope.png; do
  grep -q " $f\$" <<<"$contents" || fail "the .deb lacks $f"
done

depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
echo "Recommends: $(dpkg-deb -f "$deb" Recommends)"
grep -qi 'cuda\|cublas\|nvidia' <<<"$depends" && fail "a CUDA library is a hard dependency: $depends"
grep -q 'libc6' <<<"$depends" || fail "no libc6 in Depends (dpkg-shlibdeps did not run?)"
# The CPU backend's threads are oneTBB's (docs/decisions/cpu-threading.md); libgomp is no longer linked.
grep -q 'libtbb12' <<<"$depends" || fail "no libtbb12 in Depends: $depends"
grep -q 'libgomp' <<<"$depends" && fail "libgomp in Depends: $depends"
# Every dependency is a package of this Debian system (the build machine is Debian 12).
for p in $(tr ',|' '\n\n' <<<"$depends" | sed 's/(.*)//; s/ //g' | sort -u); do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || apt-cache show "$p" >/dev/null 2>&1 ||
    fail "dependency $p is not a Debian package here"
done

dpkg -x "$deb" "$tmp/root"
readelf -d "$tmp/root/usr/bin/diffscope" | grep NEEDED | grep -i 'cuda\|cublas' && fail "the binary links a CUDA library"
mkdir "$tmp/elsewhere" && cd "$tmp/elsewhere"
"$tmp/root/usr/bin/diffscope" sample --model moons --n 64 --steps 20 --out x.npy || fail "sample --model moons"
[ -s x.npy ] || fail "no x.npy"
pydir=$(find "$tmp/root" -name '_diffscope*.so' -printf '%h\n' | head -1)
if [ -n "$pydir" ]; then
  for f in __init__.pyi _diffscope.pyi py.typed; do  # the type stubs (PEP 561), beside the module
    [ -f "$pydir/$f" ] || fail "the packaged Python package has no $f"
  done
  PYTHONPATH=$(dirname "$pydir") /usr/bin/python3 -c '
import diffscope, numpy as np
x = diffscope.load("moons").sample(64, steps=20)
assert np.array_equal(x, np.load("x.npy")), "the packaged module differs from the packaged CLI"
' || fail "packaged Python module"
fi
echo "deb_package: ok"

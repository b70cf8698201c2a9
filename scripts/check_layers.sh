#!/usr/bin/env bash
# check_layers.sh — fails when a file includes from a layer it may not use, or when ui issues raw GL or CUDA
# (docs/ARCHITECTURE.md "Layers"). Run from anywhere; CI runs it as the ctest `layers`.
set -uo pipefail
cd "$(dirname "$0")/.."
# layer -> the layers its files may include ("quoted" includes of the form "layer/file.h")
declare -A allowed=(
  [core]="core"
  [kernels]="kernels core"
  [gpu]="gpu core kernels"
  [render]="render core"
  [ui]="ui render core"
  [shell]="shell ui render gpu core"
  [cli]="cli shell ui render gpu core"
)
# layer -> system headers it must not include (a regular expression)
declare -A forbidden_sys=(
  [core]='<(epoxy|GLFW|EGL|cuda|cublas|imgui)'
  [kernels]='<(epoxy|GLFW|EGL|imgui)'
  [gpu]='<(GLFW|EGL|imgui)'
  [render]='<(cuda|cublas|imgui)'
  [ui]='<(epoxy|GLFW|EGL|cuda|cublas|imgui_impl)'
)
bad=0
for layer in "${!allowed[@]}"; do
  dir=app/$layer; [ "$layer" = kernels ] && dir=kernels
  [ -d "$dir" ] || continue
  while IFS= read -r f; do
    while IFS= read -r inc; do
      target=${inc%%/*}
      case " ${allowed[$layer]} " in *" $target "*) ;; *)
        echo "layers: $f includes \"$inc\": $layer may include only from: ${allowed[$layer]}"; bad=1 ;;
      esac
    done < <(grep -oE '^#include "[a-z_]+/[^"]+"' "$f" | sed -E 's/^#include "([^"]+)"/\1/')
    if [ -n "${forbidden_sys[$layer]:-}" ] && grep -nE "^#include ${forbidden_sys[$layer]}" "$f" >/dev/null; then
      # gpu's interop object is the one place where CUDA meets GL (it includes epoxy for cuda_gl_interop.h)
      echo "layers: $f: $(grep -nE "^#include ${forbidden_sys[$layer]}" "$f" | head -1): not allowed in $layer"; bad=1
    fi
    if [ "$layer" = gpu ] && [ "$(basename "$f")" != interop_compute.cpp ] && grep -nE '^#include <epoxy' "$f" >/dev/null; then
      echo "layers: $f includes GL: only gpu/interop_compute.cpp may"; bad=1
    fi
    if [ "$layer" = ui ] && grep -nE '(^|[^A-Za-z0-9_:.>])gl[A-Z][A-Za-z0-9]*[[:space:]]*\(' "$f" >/dev/null; then
      echo "layers: $f: raw GL call ($(grep -nE '(^|[^A-Za-z0-9_:.>])gl[A-Z][A-Za-z0-9]*[[:space:]]*\(' "$f" | head -1)): ui draws through render/"; bad=1
    fi
  done < <(find "$dir" -maxdepth 1 -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \) | sort)
done
[ $bad -eq 0 ] && echo "layers: every include follows docs/ARCHITECTURE.md's matrix"
exit $bad

#!/usr/bin/env bash
# check_layers.sh — fails when a file includes from a room it may not use, when ui or picture issue raw GL, or when
# kernels/ reads the environment or keeps function-local statics (docs/ARCHITECTURE.md "Rooms"). Run from anywhere;
# CI runs it as the ctest `layers`. The hard limits (files per folder, lines per function, no history in the code)
# are scripts/check_limits.sh's.
set -uo pipefail
cd "$(dirname "$0")/.."
# room -> the rooms its files may include ("quoted" includes of the form "room/file.h"). The core rooms, each on
# the ones before it: base (vocabulary: errors, ranges, precision, the noise stream), platform (the OS edges),
# formats (file formats), model (what a model is), diffusion (the maths of sampling), run (running a request on a
# backend), session (the interactive session's state, no ImGui), grid (the comparison grid: cells planned and run
# through the run plan, their metrics).
core_rooms="base platform formats model diffusion run session grid"
declare -A allowed=(
  [base]="base"
  [platform]="platform base"
  [formats]="formats platform base"
  [model]="model formats platform base"
  [diffusion]="diffusion model formats platform base"
  [run]="run diffusion model formats platform base"
  [session]="session train grid run diffusion model formats platform base"
  [grid]="grid run diffusion model formats platform base"
  [train]="train diffusion model formats platform base"
  [kernels]="kernels base"
  [plan]="kernels base"
  [gpu]="gpu kernels train $core_rooms"
  [render]="render $core_rooms"
  [picture]="picture render $core_rooms"
  [ui]="ui picture render $core_rooms"
  [shell]="shell ui picture render gpu $core_rooms"
  [cli]="cli train shell ui picture render gpu kernels $core_rooms"
)
# room -> system headers it must not include (a regular expression)
no_gpu_gl='<(epoxy|GLFW|EGL|cuda|cublas|imgui)'
declare -A forbidden_sys=(
  [base]=$no_gpu_gl [platform]=$no_gpu_gl [formats]=$no_gpu_gl [model]=$no_gpu_gl [diffusion]=$no_gpu_gl
  [run]=$no_gpu_gl [session]=$no_gpu_gl [grid]=$no_gpu_gl [train]=$no_gpu_gl
  [kernels]='<(epoxy|GLFW|EGL|imgui)'
  [plan]='<(epoxy|GLFW|EGL|imgui|cuda|cublas)'
  [gpu]='<(GLFW|EGL|imgui)'
  [render]='<(cuda|cublas|imgui)'
  [picture]='<(epoxy|GLFW|EGL|cuda|cublas|imgui)'
  [ui]='<(epoxy|GLFW|EGL|cuda|cublas|imgui_impl)'
)
# every folder under app/ is a room of the table
for d in app/*/; do
  r=$(basename "$d")
  [ -n "${allowed[$r]:-}" ] || { echo "layers: app/$r/ is not a room of scripts/check_layers.sh (add it and its row in docs/ARCHITECTURE.md)"; exit 1; }
done
bad=0
for layer in "${!allowed[@]}"; do
  dir=app/$layer; [ "$layer" = kernels ] && dir=kernels; [ "$layer" = plan ] && dir=kernels/plan
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
    if { [ "$layer" = ui ] || [ "$layer" = picture ]; } && grep -nE '(^|[^A-Za-z0-9_:.>])gl[A-Z][A-Za-z0-9]*[[:space:]]*\(' "$f" >/dev/null; then
      echo "layers: $f: raw GL call ($(grep -nE '(^|[^A-Za-z0-9_:.>])gl[A-Z][A-Za-z0-9]*[[:space:]]*\(' "$f" | head -1)): $layer draws through render/"; bad=1
    fi
  done < <(if [ "$layer" = kernels ]; then find "$dir" -path kernels/plan -prune -o -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \) -print;
           else find "$dir" -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \); fi | sort)
done
# The kernels take their choices from the plan (kernels/plan/kernel_plan.h) and their per-device state from the
# backend's LaunchContext: no environment and no function-local statics anywhere under kernels/.
while IFS= read -r f; do
  if grep -nE '(std::)?getenv[[:space:]]*\(' "$f" >/dev/null; then
    echo "layers: $f:$(grep -nE '(std::)?getenv[[:space:]]*\(' "$f" | head -1 | cut -d: -f1): getenv in kernels/ (options come from the plan)"; bad=1
  fi
  if grep -nE '^[[:space:]]+static[[:space:]]+(const[[:space:]]+)?[A-Za-z_:<>]+[[:space:]]+[A-Za-z_][A-Za-z0-9_]*[[:space:]]*(=|;|\{|\[)' "$f" >/dev/null; then
    echo "layers: $f:$(grep -nE '^[[:space:]]+static[[:space:]]+(const[[:space:]]+)?[A-Za-z_:<>]+[[:space:]]+[A-Za-z_][A-Za-z0-9_]*[[:space:]]*(=|;|\{|\[)' "$f" | head -1 | cut -d: -f1): a function-local static in kernels/ (per-device state belongs to the backend's LaunchCache)"; bad=1
  fi
done < <(find kernels -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \) | sort)
# The core rooms speak in argument ids (base/arg_error.h); each front end spells them its own way: no CLI flags there.
flags=$(for r in $core_rooms; do grep -rnE '"--[a-z]' "app/$r" 2>/dev/null; done | head -5)
if [ -n "$flags" ]; then
  echo "layers: a CLI flag in a core room (name the argument by its id, base/arg_error.h):"; echo "$flags"; bad=1
fi
[ $bad -eq 0 ] && echo "layers: every include follows docs/ARCHITECTURE.md's matrix"
exit $bad

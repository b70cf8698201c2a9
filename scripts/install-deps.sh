#!/usr/bin/env bash
# install-deps.sh — installs diffscope's build and test dependencies from Debian 12 packages (root or sudo).
# The CUDA toolkit (12.4+, for the GPU backend) is a prerequisite you install yourself; without it the CPU build works.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
packages=(
  build-essential cmake ninja-build pkg-config git
  libeigen3-dev libtbb-dev libssl-dev nlohmann-json3-dev libcli11-dev librandom123-dev libstb-dev libgtest-dev libboost-dev
  libglfw3-dev libepoxy-dev libimgui-dev libegl-dev libgl-dev
  libegl-mesa0 libgl1-mesa-dri xvfb xauth
  clang-14 libclang-rt-14-dev
  ffmpeg libpng-dev libcairo2-dev fonts-dejavu-core poppler-utils librsvg2-bin
  pybind11-dev python3-dev python3-numpy libdlpack-dev mypy
  dpkg-dev file desktop-file-utils shared-mime-info
  universal-ctags
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: CUDA toolkit found — the CUDA backend will be built"
else
  echo "install-deps: no CUDA toolkit (nvcc) — building the CPU backend only"
fi

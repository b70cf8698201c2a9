# bench/device_env.sh — on the H200 machine, from the repository root: library paths for the executables built
# on the development machine and carried in .gpu/bin-k (see ../shared/gpu/README.md).
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:$PWD/.gpu/bin-k/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DIFFSCOPE_ROOT="$PWD"
export PYTHONUNBUFFERED=1
nvidia-smi -L | head -1

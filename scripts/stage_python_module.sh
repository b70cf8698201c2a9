#!/bin/bash
# stage_python_module.sh TREE OUTDIR — what a machine with another Python (the H200: 3.12, NumPy 2) needs to build the
# Python module against its own Python: the pybind11/dlpack headers the module includes (from the build's ninja
# deps), the static libraries of TREE/build and the shared ones to link. There, from the repository root:
# `bash OUTDIR/build.sh OUTDIR` -> OUTDIR/py/diffscope/_diffscope<EXT>.so (PYTHONPATH=OUTDIR/py).
set -e
T=$1; O=$2; rm -rf $O; mkdir -p $O/sysroot $O/lib
cd $T/build
deps=$(for o in python/CMakeFiles/diffscope_python.dir/*.cpp.o; do ninja -t deps $o; done | sed 's/^ *//' | grep -E '^/usr/include/(pybind11|dlpack|eigen3|nlohmann|stb|Random123|boost|tbb|oneapi)/' | grep -v '/usr/lib/gcc' | grep -v '^/usr/include/c++' | grep -v '^/usr/local/cuda' | sort -u)
for f in $deps; do [ -f "$f" ] || continue; mkdir -p $O/sysroot$(dirname $f); cp $f $O/sysroot$f; done
cp app/libdiffscope_core.a app/libdiffscope_gpu.a kernels/libdiffscope_kernels.a kernels/plan/libdiffscope_kernel_plan.a $O/lib/
cp /lib/x86_64-linux-gnu/libpng16.so.16 /lib/x86_64-linux-gnu/libtbb.so.12 /lib/x86_64-linux-gnu/libcrypto.so.3 $O/lib/
cp python/diffscope/__init__.py $O/
cat > $O/build.sh <<'EOS'
#!/bin/bash
# build.sh DIR — the Python module built on this machine against its python3, from the repository root.
set -e
D=$(cd $1 && pwd); R=$PWD; S=$D/sysroot; PYINC=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
EXT=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
mkdir -p $D/py/diffscope $D/obj; cp $D/__init__.py $D/py/diffscope/
INC="-I$R -I$R/app -isystem $PYINC -isystem $S/usr/include -isystem $S/usr/include/eigen3 -isystem $S/usr/include/stb -isystem /usr/local/cuda/include"
for src in $R/python/*.cpp; do f=$(basename $src .cpp); [ $f = cuda_arrays_none ] && continue
  g++ -DBOOST_ALL_NO_LIB -DDIFFSCOPE_HAVE_CUDA=1 -Ddiffscope_python_EXPORTS $INC -O2 -DNDEBUG -fPIC -fvisibility=hidden -std=gnu++17 -c $src -o $D/obj/$f.o & done; wait
L=$D/lib
g++ -shared -o $D/py/diffscope/_diffscope$EXT $D/obj/*.o $L/libdiffscope_core.a $L/libdiffscope_gpu.a $L/libdiffscope_kernels.a $L/libdiffscope_kernel_plan.a $L/libdiffscope_core.a $L/libpng16.so.16 -lz $L/libtbb.so.12 $L/libcrypto.so.3 -L/usr/local/cuda/lib64 -lcudadevrt -lcudart_static -lrt -lpthread -ldl
echo "built $D/py/diffscope/_diffscope$EXT"
EOS
du -sh $O

#!/usr/bin/env bash
# The planar hanging chain of N unit links, explicit RATTLE (h = 0.01, from a
# zigzag at rest): CPU ms per step of the C++ core with its own callbacks
# (native_chain.cc, compiled here: g++ -O2 -DNDEBUG, Eigen), of the same
# program with the model's kernels, and of odeRATTLE with the chain as a
# native model (odepkg_model from strings, q = [x1 y1 x2 y2 ...]) called
# from Octave; their ratio, the end states compared, and the model's build
# time (first and cached), side by side in one Octave session
# (bench/native_chain.m), medians of RUNS rounds.  Issue 41: "the derived
# sparse G keeps the step within 1.2x of the C++ core's own cost".
# Builds the oct-file in src/ if needed (make -C src).  The whole run takes
# about 2-3 minutes on the shared 2-core machine (the 10^5 model's build, about
# a minute, is most of it).
# Usage: bash bench/native_chain.sh [RUNS [N ...]]     (default 5, N = 1000 10000 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
shift || true
Ns=${*:-1000 10000 100000}
work=build/native-chain
mkdir -p "$work"
echo "building the oct-file (make -C src; nothing to do when up to date)..." >&2
make -C src -j2 > "$work/make.log" 2>&1 || { tail -20 "$work/make.log" >&2; exit 1; }
exe="$work/native_chain"
if [ ! -x "$exe" ] || [ -n "$(find bench/native_chain.cc src/core src/binding/NativeKernels.h -newer "$exe" -name '*.[ch]*' -print -quit)" ]; then
  echo "compiling bench/native_chain.cc (about a CPU-minute)..." >&2
  g++ -std=c++17 -O2 -DNDEBUG -Isrc -Isrc/core $(pkg-config --cflags eigen3 2>/dev/null || echo -I/usr/include/eigen3) \
    bench/native_chain.cc -o "$exe" -ldl
fi
octave-cli --norc --no-history --eval "addpath ('src'); addpath ('inst'); source ('src/PKG_ADD'); source ('PKG_ADD'); addpath ('bench'); native_chain ('$PWD/$exe', [$Ns], $runs)"

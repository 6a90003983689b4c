#!/usr/bin/env bash
# The core's time per stage of order-8 RATTLE on the pendulum model, without
# Octave (bench/rattle_stage.cc): builds the model with odepkg_model (from
# strings, in a temporary cache), compiles the loop with mkoctfile's C++
# flags and runs it.  Usage: bash bench/rattle_stage.sh [N [RUNS]]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-60}
runs=${2:-500}
work=build/rattle-stage
mkdir -p "$work"
so=$(octave-cli --norc --eval "addpath ('inst'); addpath ('src'); source ('src/PKG_ADD'); \
  m = odepkg_model ('H', '(p1^2 + p2^2)/2 + q2', 'q', 'q1 q2', 'p', 'p1 p2', 'g', 'q1^2 + q2^2 - 1', \
                    'CacheDir', '$PWD/$work/cache'); printf ('%s\n', m.file);" 2>/dev/null | tail -1)
flags=$(mkoctfile -p CXXFLAGS | sed 's/-g //')
g++ -std=c++17 $flags $(mkoctfile -p CPPFLAGS) -Isrc -Isrc/core -I/usr/include/eigen3 \
  bench/rattle_stage.cc -o "$work/rattle_stage" -ldl
"$work/rattle_stage" "$so" "$n" "$runs"

#!/usr/bin/env bash
# Instructions per step of the integration loop, this tree against a baseline
# commit (default eb48934, before events, dense output, monitoring and the
# option table), both under callgrind (instruction counts do not depend on
# the machine's load).  Usage: bash bench/loop_overhead.sh [BASE] [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-eb48934}
steps=${2:-100000}
work=build/loop-overhead
rm -rf "$work" && mkdir -p "$work/base"
git archive "$base" src/core | tar -x -C "$work/base"
flags="-std=c++17 -O2 -DNDEBUG -I/usr/include/eigen3"
g++ $flags -Isrc/core bench/loop_overhead.cc -o "$work/now"
g++ $flags -I"$work/base/src/core" bench/loop_overhead.cc -o "$work/then"
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$steps" 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
now=$(count "$work/now"); then_=$(count "$work/then")
"$work/now" "$steps"
echo "instructions: $base $then_, HEAD $now; ratio HEAD/$base = $(awk -v a="$now" -v b="$then_" 'BEGIN { printf "%.4f", a / b }')"

#!/usr/bin/env bash
# Instructions per step (per stage for the compositions) of the core's
# explicit loop and of Boost.Odeint's symplectic steppers on the same C++
# Kepler force, under callgrind (counts do not depend on the machine's load).
# Each case runs with STEPS and STEPS/10 steps; the difference over the 0.9
# STEPS extra steps removes the set-up.  Installs libboost-dev (apt-get) if
# its headers are missing.  Usage: bash bench/odeint_compare.sh [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-100000}
work=build/odeint-compare
mkdir -p "$work"
if [ ! -f /usr/include/boost/numeric/odeint.hpp ]; then
  echo "installing libboost-dev (Boost.Odeint headers)..." >&2
  apt-get install -y libboost-dev > "$work/apt.log" 2>&1 || sudo apt-get install -y libboost-dev > "$work/apt.log" 2>&1
fi
g++ -std=c++17 -O2 -DNDEBUG -I/usr/include/eigen3 -Isrc/core -DODEPKG_WITH_ODEINT \
  bench/odeint_compare.cc -o "$work/compare"
count() {  # instructions of one run: CASE STEPS
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$work/compare" "$1" "$2" 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
per_unit() {  # CASE STEPS UNITS-PER-STEP LABEL
  local n=$2 small=$(($2 / 10))
  local a b
  a=$(count "$1" "$n"); b=$(count "$1" "$small")
  awk -v a="$a" -v b="$b" -v n="$n" -v m="$small" -v u="$3" -v l="$4" \
    'BEGIN { printf "%-58s %8.1f\n", l, (a - b) / ((n - m) * u) }'
}
echo "instructions per step (per stage for compositions), Kepler e = 0.6, h = 0.001:"
per_unit sv "$steps" 1 "odepkg Stormer-Verlet, fixed steps, every step observed"
per_unit sv_quiet "$steps" 1 "odepkg Stormer-Verlet, fixed steps, observed at the ends"
per_unit kl8 $((steps / 10)) 17 "odepkg KahanLi8 over Stormer-Verlet, per stage"
per_unit vv_ours "$steps" 1 "odepkg velocity Verlet, fixed steps, observed at the ends"
per_unit vv "$steps" 1 "odeint velocity_verlet"
per_unit rkn "$steps" 6 "odeint symplectic_rkn_sb3a_mclachlan, per stage"

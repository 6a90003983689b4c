#!/usr/bin/env bash
# Kepler, 10^6 explicit Störmer–Verlet steps: ns per step of odeSV with a
# native model (odepkg_model) called from Octave, against Boost.Odeint's
# velocity_verlet on the same force (native_vs_odeint.cc, compiled here),
# and against odeSV with a function handle; side by side in one Octave
# session (bench/native_vs_odeint.m), medians of RUNS rounds.
# Builds the oct-file in src/ if needed (make -C src), installs libboost-dev
# (apt-get) if its headers are missing.
# Usage: bash bench/native_vs_odeint.sh [STEPS] [HANDLE_STEPS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-1000000}
handle_steps=${2:-100000}
runs=${3:-5}
work=build/native-vs-odeint
mkdir -p "$work"
if [ ! -f /usr/include/boost/numeric/odeint.hpp ]; then
  echo "installing libboost-dev (Boost.Odeint headers)..." >&2
  apt-get install -y libboost-dev > "$work/apt.log" 2>&1 || sudo apt-get install -y libboost-dev > "$work/apt.log" 2>&1
fi
echo "building the oct-file (make -C src; nothing to do when up to date)..." >&2
make -C src -j2 > "$work/make.log" 2>&1 || { tail -20 "$work/make.log" >&2; exit 1; }
g++ -std=c++17 -O2 -DNDEBUG bench/native_vs_odeint.cc -o "$work/odeint" -ldl
octave-cli --norc --no-history --eval "addpath ('src'); addpath ('inst'); source ('src/PKG_ADD'); source ('PKG_ADD'); addpath ('bench'); native_vs_odeint ('$work/odeint', $steps, $handle_steps, $runs)"

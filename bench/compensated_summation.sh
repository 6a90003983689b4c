#!/usr/bin/env bash
# Energy error of 10^7 fixed steps (KahanLi8 over explicit Störmer–Verlet)
# with and without compensated summation (option CompensatedSummation).
# Usage: bash bench/compensated_summation.sh [STEPS]   (default 10000000)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/bench
g++ -std=c++17 -O2 -DNDEBUG -I/usr/include/eigen3 -Isrc/core bench/compensated_summation.cc \
    -o build/bench/compensated_summation
build/bench/compensated_summation "${1:-10000000}"

#!/usr/bin/env bash
# Benchmarks (not tests): `make bench` builds and installs the package, then
# runs this.  RUNS=n sets the number of timed runs (median reported);
# ONLY=geometric runs the geometric RATTLE case (McLachlan et al. 2014) alone;
# ONLY=chain the sparse hanging chain of issue 26 (sparse_chain.m) alone.
set -euo pipefail
cd "$(dirname "$0")"
octave-cli --norc --no-gui --no-history --eval "run_benchmarks (${RUNS:-5}, '${ONLY:-}')"

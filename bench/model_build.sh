#!/bin/bash
# Build time of a native model (issue 41): the pendulum as a constrained
# particle, H = |p|^2/2 + q2, g = |q|^2 - 1.  Each run: a fresh cache
# folder; a fresh octave-cli builds the model (derivation in one SymPy
# call, C generation, gcc), then a second fresh octave-cli builds it again
# (a hit: no SymPy, no compiler).  Timed: the odepkg_model call (wall),
# from strings (the first SymPy call of the session, so Python's start is
# included) and from syms (Python already started by syms).  Medians of
# RUNS (default 5).   Usage: bash bench/model_build.sh [RUNS]
set -e
cd "$(dirname "$0")/.."
RUNS=${1:-5}
OCT="octave-cli --norc --no-gui"
CODE='addpath ("inst"); addpath ("src"); source ("src/PKG_ADD");
  mode = getenv ("MODE"); dir = getenv ("CDIR");
  if (strcmp (mode, "sym"))
    pkg load symbolic; syms q1 q2 p1 p2 real
    H = (p1^2 + p2^2)/2 + q2; g = q1^2 + q2^2 - 1; q = [q1 q2]; p = [p1 p2];
  else
    H = "(p1^2 + p2^2)/2 + q2"; g = "q1^2 + q2^2 - 1"; q = "q1 q2"; p = "p1 p2";
  endif
  t0 = tic (); [m, i] = odepkg_model ("H", H, "q", q, "p", p, "g", g, "CacheDir", dir); t = toc (t0);
  printf ("%d %.4f %.4f %.4f\n", i.cached, t, i.derive_seconds, i.compile_seconds);'
for mode in str sym; do
  first=(); again=()
  for r in $(seq "$RUNS"); do
    dir=$(mktemp -d)
    a=$(MODE=$mode CDIR=$dir $OCT --eval "$CODE" 2>/dev/null | tail -1)
    b=$(MODE=$mode CDIR=$dir $OCT --eval "$CODE" 2>/dev/null | tail -1)
    rm -rf "$dir"
    [ "${a%% *}" = 0 ] && [ "${b%% *}" = 1 ] || { echo "unexpected cache state: '$a' / '$b'"; exit 1; }
    first+=("$(echo "$a" | cut -d' ' -f2-)"); again+=("$(echo "$b" | cut -d' ' -f2)")
  done
  med() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
  f=$(printf '%s\n' "${first[@]}" | cut -d' ' -f1 | med)
  fd=$(printf '%s\n' "${first[@]}" | cut -d' ' -f2 | med)
  fc=$(printf '%s\n' "${first[@]}" | cut -d' ' -f3 | med)
  c=$(printf '%s\n' "${again[@]}" | med)
  echo "pendulum from $mode: first build $f s (derivation + generation $fd s, gcc $fc s), cached build (new session) $c s; medians of $RUNS, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
done

#!/usr/bin/env bash
# make fuzz: seeded, reproducible fuzzing of every odepkg entry point against
# the installed package (build/home).  SEED (default 1) and CALLS (default
# 10000) choose the cases (tools/fuzz/fuzz_cases.m); they run in batches of
# BATCH (default 250), each in its own octave-cli process under a timeout,
# so a crash or a hang ends only its batch: the case that caused it is the
# first without a result line (each case's line is written as it ends), it
# is recorded as CRASH or HANG and the batch resumes after it.  Ends with a
# table of the classes and fails on any CRASH, HANG, EMPTYID (an error
# without identifier that is not the user's own) or NONFINITE (non-finite
# output without a warning).  Usage: bash tools/fuzz/run_fuzz.sh [SEED] [CALLS]
set -uo pipefail
cd "$(dirname "$0")/../.."
seed=${1:-${SEED:-1}}
calls=${2:-${CALLS:-10000}}
batch=${BATCH:-250}
limit=${FUZZ_TIMEOUT:-120}
dir=build/fuzz-$seed-$calls
rm -rf "$dir" && mkdir -p "$dir"
OCT="env HOME=$PWD/build/home octave-cli --norc --no-gui --no-history"
# FUZZ_TREE=1: the working tree's inst/ and src/ instead of the installed package
load="pkg load odepkg;"
[ "${FUZZ_TREE:-0}" = 1 ] && load="addpath ('inst'); addpath ('src'); addpath ('inst/deval_odepkg');"
start=$(date +%s)
$OCT --eval "addpath ('tools/fuzz'); c = fuzz_cases ($seed, $calls); fid = fopen ('$dir/cases.txt', 'w'); fprintf (fid, '%s\n', c{:}); fclose (fid);" \
  || { echo "fuzz: could not generate the cases"; exit 1; }
: > "$dir/results.txt"
# the runner itself must work (a broken harness would report every case)
$OCT --eval "$load addpath ('tools/fuzz'); fuzz_batch ('$dir/cases.txt', 1, 0, '$dir/results.txt')" \
  > "$dir/batch.out" 2>&1 || { cat "$dir/batch.out"; echo "fuzz: the batch runner fails on its own"; exit 1; }
for (( b = 1; b <= calls; b += batch )); do
  from=$b; to=$(( b + batch - 1 )); (( to > calls )) && to=$calls
  while (( from <= to )); do
    timeout -s KILL "$limit" $OCT --eval "$load addpath ('tools/fuzz'); fuzz_batch ('$dir/cases.txt', $from, $to, '$dir/results.txt')" \
      > "$dir/batch.out" 2>&1
    rc=$?
    last=$(awk -F'\t' -v f="$from" -v t="$to" '$1 >= f && $1 <= t { if ($1 > m) m = $1 } END { print m + 0 }' "$dir/results.txt")
    (( last < from - 1 )) && last=$(( from - 1 ))
    if (( last >= to )); then break; fi
    culprit=$(( last + 1 ))
    if (( rc == 137 || rc == 124 )); then cls=HANG; else cls=CRASH; fi
    printf "%d\t%s\trc=%d\n" "$culprit" "$cls" "$rc" >> "$dir/results.txt"
    from=$(( culprit + 1 ))
  done
done
echo "fuzz: seed $seed, $calls cases, $(( $(date +%s) - start )) s"
awk -F'\t' '{ n[$2]++ } END { for (c in n) printf "  %-10s %6d\n", c, n[c] }' "$dir/results.txt" | sort
bad=$(awk -F'\t' '$2 == "CRASH" || $2 == "HANG" || $2 == "EMPTYID" || $2 == "NONFINITE"' "$dir/results.txt")
if [ -n "$bad" ]; then
  echo "fuzz: failing cases (index, class, identifier or message; the statement):"
  while IFS=$'\t' read -r i cls id; do
    printf "  %s %s %s\n    %s\n" "$i" "$cls" "$id" "$(sed -n "${i}p" "$dir/cases.txt")"
  done <<< "$bad"
  exit 1
fi
echo "fuzz: no crash, hang, empty identifier or silent non-finite output"

#!/usr/bin/env bash
# make valgrind: every Google Test binary of the C++ core under valgrind
# memcheck (unsanitized RelWithDebInfo build in build/valgrind-core):
# invalid reads/writes, uninitialised values and definite or indirect leaks
# are errors (--error-exitcode).  Excluded, with the reason: the 10^6-step
# structure tests (*MillionSteps*: about 50x slower under valgrind, and the
# same group code runs in every other Lie-group test) and
# Rattle.EnergyBoundedLongRun (asserts 10^5 steps in under 3 s of wall time:
# 17 s under memcheck; the same RATTLE steps run in every other Rattle test).
# --soname-synonyms=somalloc=nouserintercepts: large_state_test counts heap
# bytes with its own global operator new/delete (a size header before each
# block); memcheck would otherwise replace that operator new but not the
# test's sized delete, and report the header read as invalid.  Memcheck still
# sees every block through the malloc/free underneath.
# Ends with one summary line; exit status non-zero on any report.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
start=$(date +%s)
cmake -S test -B build/valgrind-core -DCMAKE_BUILD_TYPE=RelWithDebInfo > build/valgrind-core.log 2>&1 \
  || { cat build/valgrind-core.log; exit 1; }
make -C build/valgrind-core -j2 >> build/valgrind-core.log 2>&1 || { tail -n 30 build/valgrind-core.log; exit 1; }
# CallbackHeap.RaisedThresholds*: glibc's malloc thresholds, which memcheck's
# own allocator replaces (the test asserts glibc's page faults);
# SparseRattLie.TenThousandBodiesInLinearMemory asserts the process's peak
# resident memory (< 400 MB), which memcheck's shadow memory raises (507 MB
# under memcheck, no error reported; make sanitize leaves it out for ASan's)
filter='-*MillionSteps*:Rattle.EnergyBoundedLongRun:CallbackHeap.RaisedThresholds*:SparseRattLie.TenThousandBodiesInLinearMemory'
failed=0; ran=0
# every test binary: the standalone ones (*_test) and the groups of several
# test files compiled as one (core_*, test/CMakeLists.txt)
for bin in build/valgrind-core/*_test build/valgrind-core/core_*; do
  [ -f "$bin" ] && [ -x "$bin" ] || continue
  name=$(basename "$bin")
  log=build/valgrind-$name.log
  if valgrind --tool=memcheck --error-exitcode=97 --leak-check=full --soname-synonyms=somalloc=nouserintercepts \
       --errors-for-leak-kinds=definite,indirect --track-origins=yes --quiet \
       "$bin" --gtest_filter="$filter" --gtest_brief=1 > "$log" 2>&1; then
    echo "valgrind: $name clean"
  else
    echo "valgrind: $name REPORTED (see $log)"; grep -m 20 -E "==[0-9]+==|FAILED" "$log" || true
    failed=$(( failed + 1 ))
  fi
  ran=$(( ran + 1 ))
done
echo "valgrind: $ran Google Test binaries under memcheck, $failed with reports or failures; $(( $(date +%s) - start )) s"
[ "$failed" -eq 0 ]

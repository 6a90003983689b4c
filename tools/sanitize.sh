#!/usr/bin/env bash
# make sanitize: the Google Tests and the oct-files built with
# -fsanitize=address,undefined, and the whole Octave test suite run against
# those oct-files with libasan preloaded into Octave.  Builds go to
# build/asan-core and build/asan-src (a copy of src/), never into src/.
# Any sanitizer report fails the run (UBSan does not recover: it aborts).
# Leak detection: on for the Google Tests (our code only); off inside
# Octave, whose interpreter leaves its own allocations at exit (not this
# package's; the same code paths are leak-checked by the Google Tests).
# Ends with one summary line; exit status non-zero on any report or failure.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
start=$(date +%s)

echo "== sanitize: Google Tests (ASan + UBSan, leak detection on)"
cmake -S test -B build/asan-core -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$san" \
  > build/asan-core.log 2>&1 || { cat build/asan-core.log; exit 1; }
make -C build/asan-core -j2 >> build/asan-core.log 2>&1 || { tail -n 30 build/asan-core.log; exit 1; }
core_rc=0
(cd build/asan-core && ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest -j2 --output-on-failure) > build/asan-ctest.log 2>&1 || core_rc=1
tail -n 3 build/asan-ctest.log
core_line=$(grep -E 'tests passed' build/asan-ctest.log | tail -n 1)

echo "== sanitize: oct-files (ASan + UBSan) in build/asan-src"
rm -rf build/asan-src && cp -r src build/asan-src && make -C build/asan-src clean > /dev/null
CXXFLAGS="-O1 -g $san" LDFLAGS="$san" make -C build/asan-src -j2 > build/asan-src.log 2>&1 \
  || { tail -n 30 build/asan-src.log; exit 1; }

echo "== sanitize: the Octave test suite against them (libasan preloaded)"
oct_rc=0
LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \
ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  octave-cli --norc --no-gui --eval \
  'addpath ("test"); [np, nf] = run_tests_in ("inst", "build/asan-src"); exit (nf > 0)' \
  > build/asan-octave.log 2>&1 || oct_rc=1
grep -E "passed$|octave:" build/asan-octave.log | tail -n 1
reports=$(grep -c -E "ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer" \
            build/asan-ctest.log build/asan-octave.log | awk -F: '{s += $2} END {print s}')
[ "$reports" -ne 0 ] && grep -h -A12 -E "ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer" \
                          build/asan-ctest.log build/asan-octave.log | head -n 60
echo "sanitize: Google Tests: ${core_line:-none}; Octave: $(grep -E '^octave:' build/asan-octave.log | tail -n 1); sanitizer reports: $reports; $(( $(date +%s) - start )) s"
[ "$core_rc" -eq 0 ] && [ "$oct_rc" -eq 0 ] && [ "$reports" -eq 0 ]

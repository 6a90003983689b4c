#!/usr/bin/env bash
# make check: the C++ core's Google Tests through CTest and every %!test of
# the installed package (pkg install -local into a throwaway HOME).  Prints a
# final "N passed, M failed" line and exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
status=0

# The Google Tests compile in the background (two jobs) while the Octave
# suite (one interpreter, about two minutes) runs: the compile is the longest
# part of the run, and it starts first.  -O2, not CMake's -O3: 19 % less
# compile time (rattle_test.cc: 41.8 s against 51.5 s).  test/CMakeLists.txt
# compiles the test files in a few groups (one translation unit each), not
# one executable per file: the header-only core's templates are instantiated
# and compiled once per group (1268 s CPU against 576 s for the whole build).
echo "== C++ core: Google Tests compiling in the background (build/core-build.log)"
cmake -S test -B build/core -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" > build/cmake.log 2>&1 || { cat build/cmake.log; exit 1; }
make -C build/core -j2 > build/core-build.log 2>&1 &
core_build_pid=$!
example_build_pid=""
trap 'kill "$core_build_pid" $example_build_pid 2>/dev/null' EXIT   # an early exit leaves no compiler behind

echo "== Octave: install the package and run every %!test"
make --no-print-directory install > build/install.log 2>&1 || { tail -n 40 build/install.log; echo "0 passed, 1 failed"; exit 1; }
grep -i "warning" build/install.log && { echo "pkg install printed warnings"; status=1; }
HOME=$PWD/build/home octave-cli --norc --no-gui --eval \
  'addpath ("test"); pkg load odepkg; [np, nf] = run_package_tests (); fid = fopen ("build/octave-counts", "w"); fprintf (fid, "%d %d\n", np, nf); fclose (fid); exit (nf > 0)' \
  2> >(grep -v "ignoring const execution_exception" >&2)
oct_rc=$?
read -r oct_passed oct_failed < build/octave-counts || { oct_passed=0; oct_failed=1; }

# The C++ example's build (the core installed as a CMake package, then
# examples/cpp against it: one compile of about a minute on one core) runs
# beside the Google Tests' compile once the Octave suite is done, not after
# CTest with the second core idle; it is run after CTest, below.
rm -rf build/core-lib build/core-install build/example
( cmake -S src/core -B build/core-lib \
  && cmake --install build/core-lib --prefix "$PWD/build/core-install" \
  && cmake -S examples/cpp -B build/example -DCMAKE_PREFIX_PATH="$PWD/build/core-install" \
  && cmake --build build/example ) > build/core-lib.log 2>&1 &
example_build_pid=$!

# --- a fixed-seed slice of the fuzzer (tools/fuzz): 1,000 calls of every
# entry point with bad inputs; one test, failed by any crash, hang, error
# without identifier or silent non-finite output
echo "== Fuzz slice: seed 2026, 1000 cases against the installed package"
fuzz_failed=0
bash tools/fuzz/run_fuzz.sh 2026 1000 > build/fuzz-slice.log 2>&1 || fuzz_failed=1
tail -n 12 build/fuzz-slice.log
[ "$fuzz_failed" -ne 0 ] && status=1

# --- figures: every solver's %!demo rendered headless (octave --no-gui with
# gnuplot; octave-cli has no graphics toolkit), each PNG checked non-trivial;
# drawn once per install (make demo's figures are reused when up to date)
echo "== Figures: the demos rendered to build/figures/*.png"
fig_failed=0
make --no-print-directory figures > build/figures.log 2>&1 || fig_failed=1
grep -E "\.png|figures:" build/figures.log \
  || echo "figures: $(ls build/figures/*.png 2>/dev/null | wc -l) PNGs drawn by make demo from this install, reused"
[ "$fig_failed" -ne 0 ] && { tail -n 20 build/figures.log; status=1; }
echo "== C++ core: Google Test via CTest"
core_build_rc=0
wait "$core_build_pid" || core_build_rc=$?
tail -n 3 build/core-build.log
[ "$core_build_rc" -ne 0 ] && { tail -n 40 build/core-build.log; status=1; }
example_build_rc=0
wait "$example_build_pid" || example_build_rc=$?   # CTest's timings on idle cores
(cd build/core && ctest --output-on-failure -j2) | tee build/ctest.log
ctest_rc=${PIPESTATUS[0]}
line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' build/ctest.log | tail -n 1)
core_total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<< "$line")
core_failed=$(sed -E 's/.* ([0-9]+) tests failed.*/\1/' <<< "$line")
core_total=${core_total:-0}; core_failed=${core_failed:-1}
[ "$ctest_rc" -ne 0 ] && status=1
[ "$core_total" -eq 0 ] && { echo "no C++ test ran"; status=1; }

# --- the core as an installed CMake package: the C++ example builds against it
echo "== C++ core as a library: cmake --install, then examples/cpp against it"
example_failed=0
if [ "$example_build_rc" -eq 0 ] && build/example/pendulum_rattle; then
  echo "example: passed"
else
  tail -n 20 build/core-lib.log; echo "example: FAILED"; example_failed=1; status=1
fi

[ "$oct_rc" -ne 0 ] && status=1
[ "$oct_passed" -eq 0 ] && { echo "no Octave test ran"; status=1; }

passed=$(( core_total - core_failed + oct_passed + 1 - example_failed + 1 - fig_failed + 1 - fuzz_failed ))
failed=$(( core_failed + oct_failed + example_failed + fig_failed + fuzz_failed ))
echo
echo "C++ core: $(( core_total - core_failed )) passed, $core_failed failed; C++ example against the installed core: $(( 1 - example_failed )) passed, $example_failed failed; Octave: $oct_passed passed, $oct_failed failed; figures: $(( 1 - fig_failed )) passed, $fig_failed failed; fuzz slice: $(( 1 - fuzz_failed )) passed, $fuzz_failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -ne 0 ] && status=1
exit $status

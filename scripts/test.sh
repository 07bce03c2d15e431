#!/usr/bin/env bash
# README command 2: installs what is missing, builds, and runs the whole test
# suite in a normal build; then, under AddressSanitizer and
# UndefinedBehaviorSanitizer, every unit and integration test and the
# end-to-end tests labelled `smoke` (test/CMakeLists.txt says which and why);
# then the fuzz smoke: every libFuzzer target
# under fuzz/ built by clang (build-fuzz) and run for a short fixed number of
# runs (or 4 seconds) over its seed corpus (CTest tests fuzz.*). Set
# FEDMETRICS_SKIP_SANITIZERS=1 to skip both sanitizer passes (the ASan suite
# and the fuzz smoke) while iterating locally, FEDMETRICS_SKIP_FUZZ=1 to skip
# the fuzz smoke only. Tests run two at a time (FEDMETRICS_TEST_JOBS, default
# 2; the load tests are marked RUN_SERIAL in test/CMakeLists.txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/install-deps.sh
jobs=${FEDMETRICS_TEST_JOBS:-2}

echo "==> build (RelWithDebInfo)"
bash scripts/build.sh build
echo "==> tests"
(cd build && ctest --output-on-failure --timeout 300 -j "$jobs")

if [ "${FEDMETRICS_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "==> build (ASan + UBSan)"
  bash scripts/build.sh build-asan -DFEDMETRICS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DFEDMETRICS_BUILD_BENCH=OFF
  echo "==> tests under sanitizers"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --output-on-failure --timeout 600 -j "$jobs" -L '^(unit|integration|smoke)$')
fi
if [ "${FEDMETRICS_SKIP_SANITIZERS:-0}" != "1" ] && [ "${FEDMETRICS_SKIP_FUZZ:-0}" != "1" ]; then
  echo "==> build (libFuzzer targets, clang, ASan + UBSan)"
  bash scripts/build.sh build-fuzz -DFEDMETRICS_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++
  echo "==> fuzz smoke"
  (cd build-fuzz && ctest -L fuzz --output-on-failure --timeout 300 -j "$jobs")
fi
echo "==> all tests passed"

#!/usr/bin/env bash
# README command 2: installs what is missing, builds, and runs the whole test
# suite: once in a normal build, once under AddressSanitizer and
# UndefinedBehaviorSanitizer. Set FEDMETRICS_SKIP_SANITIZERS=1 to skip the
# second pass while iterating locally.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/install-deps.sh

echo "==> build (RelWithDebInfo)"
bash scripts/build.sh build
echo "==> tests"
(cd build && ctest --output-on-failure --timeout 300)

if [ "${FEDMETRICS_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "==> build (ASan + UBSan)"
  bash scripts/build.sh build-asan -DFEDMETRICS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DFEDMETRICS_BUILD_BENCH=OFF
  echo "==> tests under sanitizers"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --output-on-failure --timeout 600)
fi
echo "==> all tests passed"

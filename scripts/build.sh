#!/usr/bin/env bash
# Configures and builds fedmetrics. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
#   BUILD_DIR defaults to build/. Example sanitizer build:
#   scripts/build.sh build-asan -DFEDMETRICS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:-build}
shift || true
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S "$root" -B "$build_dir" "$@" >/dev/null
cmake --build "$build_dir" -j "$jobs"

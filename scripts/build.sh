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
# Through ccache when it is installed (FEDMETRICS_CCACHE=0 turns it off): a
# fresh clone of a tree built before, or a build after switching branches,
# compiles from the cache (a cold plain build takes about 10 minutes on 2 cores). Paths are hashed relative to the checkout and
# the working directory is not hashed, so that clones in other directories
# share the cache; the price is that a cached object's debug info may name
# another clone's build directory.
launcher=()
if [ "${FEDMETRICS_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$build_dir" "${launcher[@]}" "$@" >/dev/null
cmake --build "$build_dir" -j "$jobs"

#!/usr/bin/env bash
# One fuzz.* CTest test: replays the seed corpus of a target, then mutates it
# for a fixed number of runs or seconds, whichever comes first. New inputs go
# to a scratch dir that is removed afterwards (the seeds in the repository
# are never written to); a crash leaves its input in the test's working dir
# (crash-*) and fails the test.
# Usage: run_smoke.sh FUZZER FUZZ_DIR NAME RUNS SECONDS
set -euo pipefail
fuzzer=$1 fuzz_dir=$2 name=$3 runs=$4 seconds=$5
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
args=(-runs="$runs" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
[ -f "$fuzz_dir/$name.dict" ] && args+=(-dict="$fuzz_dir/$name.dict")
source "$fuzz_dir/options.sh"
while read -r option; do args+=("$option"); done < <(fuzz_options "$name" "$fuzz_dir")
# libFuzzer writes new inputs into the first corpus dir only.
exec "$fuzzer" "${args[@]}" "$scratch" "$fuzz_dir/corpus/$name"

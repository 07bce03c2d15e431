#!/usr/bin/env bash
# Runs every libFuzzer target under fuzz/ for a given time, one at a time on
# one core, each on a scratch copy of its seed corpus (new inputs are not
# written back to fuzz/corpus/), and prints one row a target: executions,
# exec/s, coverage (libFuzzer's final cov:/ft:), corpus size, crashes.
# Exit 1 if any target crashed (a crash, leak, UB, timeout, OOM or a failed
# differential check); its input is in the artifacts dir printed at the end.
#
# Usage: bench/fuzz.sh [SECONDS_PER_TARGET] [BUILD_DIR]
#   SECONDS_PER_TARGET  default 10
#   BUILD_DIR           default build-fuzz (configured with clang and -DFEDMETRICS_FUZZ=ON)
# Environment:
#   FUZZ_SKIP_BUILD=1   use the build as it is
#   FUZZ_TARGETS="quantity gzip"   only these targets (default: every *_fuzz)
#   FUZZ_MAX_RUNS=N     stop a target after N executions even if time is left
#   FUZZ_KEEP_CORPUS=1  keep the scratch corpora (printed) to inspect or merge by hand
#   FUZZ_RSS_LIMIT_MB=N libFuzzer -rss_limit_mb (default 2048)
# A target's fuzz/<name>.options (max_len, ...) applies here as in the CTest smoke.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/fuzz/options.sh"
seconds=${1:-10}
build_dir=${2:-build-fuzz}
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac

if [ "${FUZZ_SKIP_BUILD:-0}" != "1" ]; then
  echo "==> build ($build_dir)" >&2
  bash "$root/scripts/build.sh" "$build_dir" -DFEDMETRICS_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ >&2
fi

if [ -n "${FUZZ_TARGETS:-}" ]; then
  read -r -a targets <<<"$FUZZ_TARGETS"
else
  targets=()
  for f in "$root"/fuzz/*_fuzz.cpp; do targets+=("$(basename "$f" _fuzz.cpp)"); done
fi

work=$(mktemp -d /tmp/fedmetrics-fuzz.XXXXXX)
artifacts="$work/artifacts"
mkdir -p "$artifacts"
cleanup() { [ "${FUZZ_KEEP_CORPUS:-0}" = "1" ] || rm -rf "$work/corpus"; }
trap cleanup EXIT

rows=()
crashed=0
for name in "${targets[@]}"; do
  fuzzer="$build_dir/fuzz/${name}_fuzz"
  [ -x "$fuzzer" ] || { echo "fuzz.sh: no $fuzzer (build first)" >&2; exit 2; }
  corpus="$work/corpus/$name"
  mkdir -p "$corpus"
  cp "$root/fuzz/corpus/$name/"* "$corpus/"
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb="${FUZZ_RSS_LIMIT_MB:-2048}" -print_final_stats=1
        -artifact_prefix="$artifacts/$name-")
  [ -n "${FUZZ_MAX_RUNS:-}" ] && args+=(-runs="$FUZZ_MAX_RUNS")
  [ -f "$root/fuzz/$name.dict" ] && args+=(-dict="$root/fuzz/$name.dict")
  while read -r option; do args+=("$option"); done < <(fuzz_options "$name" "$root/fuzz")
  log="$work/$name.log"
  echo "==> $name (${seconds}s)" >&2
  start=$(date +%s)
  status=0
  # One process, no -jobs/-workers: one core.
  "$fuzzer" "${args[@]}" "$corpus" >"$log" 2>&1 || status=$?
  elapsed=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  # The last status line ("#123 DONE cov: 456 ft: 789 corp: 12/3Kb ...").
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
  crashes=$(find "$artifacts" -name "$name-*" -type f | wc -l)
  if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes=1; fi  # died without an artifact
  [ "$crashes" -gt 0 ] && { crashed=1; cp "$log" "$artifacts/$name.log"; }
  rows+=("$(printf '%-17s %12s %9s %6s %7s %7s %8s %7s' "$name" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" \
            "${corp:-?}" "$crashes" "$elapsed")")
done

printf '%-17s %12s %9s %6s %7s %7s %8s %7s\n' target executions exec/s cov ft corpus crashes seconds
printf '%s\n' "${rows[@]}"
echo "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M UTC'), ${seconds}s a target"
echo "artifacts: $artifacts"
[ "${FUZZ_KEEP_CORPUS:-0}" = "1" ] && echo "corpora: $work/corpus"
exit "$crashed"

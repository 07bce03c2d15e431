#!/usr/bin/env bash
# bench/big_answer.sh at a small size (3 members x 50 pods, two queries, one
# run): it measures serve's cpu per pods query, its resident memory and the
# answer's size, and prints them with the targets; and it fails (exit 1)
# when it cannot measure. The figures themselves are not judged here: this
# machine's load moves them.
# Usage: big_answer_smoke_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2
bench() { timeout 60 bash "$src/bench/big_answer.sh" "$@"; }

status=0
BENCH_REPEATS=1 BIG_QUERIES=2 BIG_SIZES="3x50" bench "$(dirname "$bin")" >"$E2E_TMP/bench.out" 2>"$E2E_TMP/bench.err" ||
  status=$?
cat "$E2E_TMP/bench.out"
check "big_answer.sh exited 0 ($status)" test "$status" = 0
[ "$status" = 0 ] || tail -20 "$E2E_TMP/bench.err"
check "it printed the answer's size" grep -qE "^3 members x 50 pods: answer size +[0-9.]+ MiB" "$E2E_TMP/bench.out"
check "it printed serve's cpu per query, with the target" \
  grep -qE "^3 members x 50 pods: serve cpu per query +[0-9.]+ ms <= 100 ms (PASS|FAIL)" "$E2E_TMP/bench.out"
check "it printed the peak growth against the answer, with the target" \
  grep -qE "^3 members x 50 pods: peak growth / answer size +[0-9.]+ <= 1.5 (PASS|FAIL)" "$E2E_TMP/bench.out"
check "it printed the wall time per query" grep -qE "^3 members x 50 pods: wall time per query +[0-9.]+ ms" "$E2E_TMP/bench.out"
tmpdir=$(grep -o 'temp dir /tmp/fedmetrics-bigans\.[^ ]*' "$E2E_TMP/bench.err" | awk '{ print $3 }')
check "its temp dir ($tmpdir) was removed" test -n "$tmpdir" -a ! -e "${tmpdir:-/nonexistent}"
check "no process of its left behind" test -z "$(pgrep -f "${tmpdir:-/nonexistent}/" || true)"

# What it cannot measure is an error, never a row of blanks.
status=0
BIG_SIZES="3x50" bench "$E2E_TMP/no-build" >/dev/null 2>"$E2E_TMP/missing.err" || status=$?
check "without a fedmetrics binary it exits 1 ($status)" test "$status" = 1
check "and says where it looked" grep -q "no-build/fedmetrics not found" "$E2E_TMP/missing.err"
status=0
BIG_SIZES="3by50" bench "$(dirname "$bin")" >/dev/null 2>"$E2E_TMP/size.err" || status=$?
check "a size that is not MEMBERSxPODS exits 1 ($status)" test "$status" = 1
finish

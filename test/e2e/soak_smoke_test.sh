#!/usr/bin/env bash
# bench/soak.sh in miniature: the same script with every duration scaled down
# (6 load slices of 5 s with a 10 s idle gap in the middle: load 15 s, gap
# 10 s, load 15 s; a member fault set or cleared every 5 s), under a minute.
# Asserts that it printed its figures, that no answer was an error while the
# faults made members fail (their answers carry Warnings instead), that the
# fds came back to their level, and that it left no process or temp dir
# behind. No latency or memory assertion: this runs on a busy 2-core machine.
# Usage: soak_smoke_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

status=0
SOAK_MINUTES=6 SOAK_SLICE_SECONDS=5 SOAK_GAP_SECONDS=10 SOAK_FAULT_SECONDS=5 \
  SOAK_PEAK_CONNECTIONS="16 64" SOAK_PEAK_SECONDS=2 SOAK_WARMUP_SECONDS=3 SOAK_SETTLE_SECONDS=2 \
  timeout 150 bash "$src/bench/soak.sh" "$(dirname "$bin")" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || status=$?
cat "$E2E_TMP/out"
check "soak.sh exited 0" test "$status" = 0
[ "$status" = 0 ] || tail -30 "$E2E_TMP/err"
out=$(cat "$E2E_TMP/out")

check "it printed the peak and the fixed rate" grep -q '^fixed rate: [1-9][0-9]* req/s' <<<"$out"
check "it printed one row per load slice" test "$(grep -cE '^\| +[1-6] \| +[0-9]+ \|' <<<"$out")" = 6
check "it printed serve's memory and fds at start, per slice, in the gap and at the end" \
  test "$(grep -cE '^  (start|slice[1-6]|gap-start|gap-[0-9]+s|end) .* VmRSS +[0-9]+ KiB +fds +[0-9]+$' <<<"$out")" -ge 10
check "the faults were toggled (each change answered 200)" \
  test "$(grep -cE '^  [0-9.]+ (on|off) member[0-9]+ .* 200$' <<<"$out")" -ge 6
check "answers with a member left out were counted as Warnings" \
  grep -qE '^  answers with a Warning .*: [1-9][0-9]* +\(info\)$' <<<"$out"
check "no errors: every answer 200, no transport error" \
  grep -qE '^  errors \(non-200 answers, transport errors\) over [1-9][0-9]* requests: 0 \(0\) +PASS$' <<<"$out"
check "the memory figure was printed" grep -qE '^  VmRSS growth \(slice medians\), slice 2 -> slice 6: [0-9]+ -> [0-9]+ KiB' <<<"$out"
check "fds back to their level at start" grep -qE '^  fds at rest, .* PASS$' <<<"$out"

tmpdir=$(grep -o 'soak: temp dir [^ ]*' "$E2E_TMP/err" | awk '{ print $4 }')
check "its temp dir was named" test -n "$tmpdir"
check "its temp dir was removed" test ! -e "${tmpdir:-/nonexistent}"
check "no process it started is left (none names its temp dir)" \
  test -z "$(pgrep -f "${tmpdir:-/nonexistent}/" || true)"
finish

#!/usr/bin/env bash
# bench/fhpa_scale.sh in miniature, in both modes: 20 FederatedHPAs over 3
# members, a 2 s sync period and a 6 s window. Asserts that each run printed
# its figures, kept the cadence (every FederatedHPA synced once a period),
# saw no error answer, and that distributed mode read no pod metrics and
# asked the members for their HPAs only (2 requests a sync, one per member of
# the binding) where centralized mode reads the pods from its watches and
# each member's pod metrics once a period for all (well under one request a
# sync, where it made 4 when every sync listed the pods and asked their
# metrics itself), with no pod list of a sync's own.
# No cpu assertion: this runs on a busy 2-core machine.
# Usage: fhpa_scale_smoke_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

for mode in centralized distributed; do
  status=0
  FHPA_MODE=$mode FHPA_COUNT=20 FHPA_MEMBERS=3 FHPA_SYNC_PERIOD=2 FHPA_MEASURE_SECONDS=6 \
    timeout 100 bash "$src/bench/fhpa_scale.sh" "$(dirname "$bin")" >"$E2E_TMP/$mode.out" 2>"$E2E_TMP/$mode.err" ||
    status=$?
  cat "$E2E_TMP/$mode.out"
  check "$mode: fhpa_scale.sh exited 0" test "$status" = 0
  [ "$status" = 0 ] || tail -30 "$E2E_TMP/$mode.err"
  out=$(cat "$E2E_TMP/$mode.out")
  check "$mode: it says which mode it ran" grep -q "^mode: $mode" <<<"$out"
  check "$mode: the cadence held" grep -qE '^  every FederatedHPA synced once per 2 s .*: +PASS$' <<<"$out"
  check "$mode: no error answer from the control plane" grep -qE '^\| control-plane answers >= 300 .* \| 0 \(0\)$' <<<"$out"
  check "$mode: it printed the cpu" grep -qE '^\| serve cpu, fraction of one core, median .* \| [0-9]+\.[0-9]{3}$' <<<"$out"
  per_sync=$(sed -n 's/^| requests per sync: control plane \/ members .* | \([0-9.]*\) \/ \([0-9.]*\)$/\1 \2/p' <<<"$out")
  check "$mode: it printed the requests per sync ($per_sync)" test -n "$per_sync"
  eval "read -r cp_$mode members_$mode <<<'$per_sync'"
  tmpdir=$(grep -o 'temp dir /tmp/fedmetrics-fhpa_scale\.[^ ]*' "$E2E_TMP/$mode.err" | awk '{ print $3 }')
  check "$mode: its temp dir ($tmpdir) was removed" test -n "$tmpdir" -a ! -e "${tmpdir:-/nonexistent}"
  check "$mode: no process of its left behind" test -z "$(pgrep -f "${tmpdir:-/nonexistent}/" || true)"
done
aggregated=$(sed -n 's/^| aggregator queries per period .* | \([0-9]*\)$/\1/p' "$E2E_TMP/distributed.out")
check "distributed: no pod metrics query ($aggregated a period)" test "$aggregated" = 0
check "distributed: about one member request per member of the binding a sync (${members_distributed:-?})" \
  awk -v d="${members_distributed:-0}" 'BEGIN { exit !(d >= 1.9 && d <= 2.5) }'
check "centralized: shared reads, under one member request a sync (${members_centralized:-?})" \
  awk -v c="${members_centralized:-9}" 'BEGIN { exit !(c < 1) }'
watches=$(sed -n 's/^| member: pod watches *| *\([0-9]*\) .*/\1/p' "$E2E_TMP/centralized.out")
lists=$(sed -n 's/^| member: pod lists *| *\([0-9]*\) | *\([0-9.]*\) .*/\2/p' "$E2E_TMP/centralized.out")
check "centralized: the pods come from watches (${watches:-?} watch requests in the window)" test -n "$watches"
check "centralized: no pod list of a sync's own (${lists:-?} a sync)" awk -v l="${lists:-9}" 'BEGIN { exit !(l < 0.5) }'
finish

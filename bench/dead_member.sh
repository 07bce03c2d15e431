#!/usr/bin/env bash
# A dead member's cost (bench/README.md): the merged pods query of
# `fedmetrics serve` over the 10-member world, all healthy, then with member7
# accepting connections and never answering (the simulator's black hole).
# The first queries wait for --member-timeout until member7 has left three
# requests unanswered; from then on it is left out at once (with a Warning)
# and the merged p50 should stay within 1.2 times the healthy p50.
#
# Usage: bash bench/dead_member.sh [BUILD_DIR]   (default build/; builds nothing)
# Environment: BENCH_DURATION (10s) BENCH_REPEATS (3) BENCH_CONNECTIONS (16)
#              BENCH_MEMBER_TIMEOUT (1s: serve's --member-timeout)
#              BENCH_RESULTS (a file: the figures are appended to it as
#              dead.KEY=VALUE lines, for bench/scale.sh)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
root=$bench_root
member_timeout=${BENCH_MEMBER_TIMEOUT:-1s}
conns=${BENCH_CONNECTIONS:-16}
repeats=${BENCH_REPEATS:-3}
duration=${BENCH_DURATION:-10s}
bench_build_dir "${1:-}"
dead=member7
max_ratio=1.2
ns=bench
path=/apis/metrics.k8s.io/v1beta1/namespaces/$ns/pods

bench_init dead-member 0
log "temp dir $tmp"
for tool in wrk curl awk python3; do
  command -v "$tool" >/dev/null || { echo "dead_member: $tool not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
need_fedmetrics dead_member

# wrk_p50: one wrk run against the serve; its p50 in ms (and its errors, if any, on stderr).
wrk_p50() {
  local out
  out=$(wrk -t1 -c"$conns" -d"$duration" --latency "$serve_url")
  if echo "$out" | grep -q -e 'Non-2xx' -e 'Socket errors'; then echo "$out" | grep -e 'Non-2xx' -e 'Socket errors' >&2; fi
  to_ms "$(echo "$out" | awk '$1 == "50%" { print $2 }')"
}
# timed_query: "MS WARNING" of one pods query (the Warning header's text, or -).
timed_query() {
  local t
  t=$(curl -sk -D "$tmp/q.headers" -o /dev/null -w '%{time_total}' "$serve_url")
  printf '%d %s\n' "$(awk -v t="$t" 'BEGIN { printf "%d", t * 1000 }')" \
    "$(grep -i '^warning:' "$tmp/q.headers" | tr -d '\r' | sed 's/^[Ww]arning: //' | head -1 || true)"
}

log "starting the 10-member world and fedmetrics serve --member-timeout $member_timeout"
start_world w10 "$root/bench/worlds/ten.yaml"
control=$(control_url w10)
start_serve fm w10 --member-timeout "$member_timeout"

healthy=()
for i in $(seq "$repeats"); do
  log "wrk: all members healthy (run $i of $repeats, $duration, $conns connections)"
  healthy+=("$(wrk_p50)")
done

log "$dead: black hole (accepts connections, never answers)"
curl -sfk -X PUT "$control/sim/v1/members/$dead/faults" -H 'Content-Type: application/json' -d '{"blackhole":true}' >/dev/null ||
  fail "cannot set $dead's fault"
first=()
for i in 1 2 3 4 5; do
  read -r ms warning < <(timed_query)
  first+=("$ms")
  log "query $i: $ms ms, Warning: ${warning:--}"
done
dead_runs=()
for i in $(seq "$repeats"); do
  log "wrk: $dead black-holed (run $i of $repeats, $duration, $conns connections)"
  dead_runs+=("$(wrk_p50)")
done
read -r _ last_warning < <(timed_query)
curl -sfk -X DELETE "$control/sim/v1/members/$dead/faults" >/dev/null || true

h=$(median "${healthy[@]}")
d=$(median "${dead_runs[@]}")
ratio=$(awk -v a="$d" -v b="$h" 'BEGIN { if (b == 0) print "nan"; else printf "%.2f", a / b }')
bench_result "dead.healthy_p50_ms=$h" "dead.dead_p50_ms=$d" "dead.ratio=$ratio" "dead.first_ms=$(IFS=/; echo "${first[*]}")"
verdict=$(awk -v r="$ratio" -v l="$max_ratio" 'BEGIN { print (r != "nan" && r <= l) ? "PASS" : "FAIL" }')

echo
echo "fedmetrics dead-member bench, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, loopback; pods query $path over 10 members"
echo "wrk -t1 -c$conns -d$duration, median of $repeats runs; --member-timeout $member_timeout"
echo
printf '| %-62s | %10s |\n' "figure" "value"
printf '|%s|%s|\n' "$(printf -- '-%.0s' $(seq 64))" "------------"
printf '| %-62s | %10s |\n' "merged p50, all healthy (ms)" "$h"
printf '| %-62s | %10s |\n' "merged p50, $dead black-holed, after the first queries (ms)" "$d"
printf '| %-62s | %10s |\n' "first five queries after the black hole (ms)" "$(IFS=/; echo "${first[*]}")"
echo
echo "Warning while $dead is black-holed, after the runs: ${last_warning:--}"
echo "target: black-holed p50 / healthy p50 = $ratio (<= $max_ratio)  $verdict"
log "done"

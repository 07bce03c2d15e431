#!/usr/bin/env bash
# Soak (bench/README.md "soak.sh"): `fedmetrics serve` over the simulated
# 10-member world (worlds/ten.yaml) on 127.0.0.1, loaded at a fixed share of
# its measured peak rate for SOAK_MINUTES with an idle gap in the middle
# (load / gap / load) while one member fault is toggled every
# SOAK_FAULT_SECONDS. Prints per minute: requests, achieved rps, p50/p99,
# answers with a Warning, errors; serve's VmRSS and open fds; then the three
# targets with PASS/FAIL. Exit status 0 even when a target fails; 1 when
# something could not be measured.
#
# Usage: bash bench/soak.sh [BUILD_DIR]      (default build/; builds nothing)
# Environment (defaults: the 10-minute soak, about 13 minutes in all):
#   SOAK_MINUTES (10)          load slices, one wrk run and one row each
#   SOAK_SLICE_SECONDS (60)    length of a slice (a "minute")
#   SOAK_GAP_SECONDS (120)     idle gap after half of the slices: no request at all
#   SOAK_FAULT_SECONDS (30)    a member fault is set, then cleared, every this long
#   SOAK_PEAK_CONNECTIONS ("16 64 128") SOAK_PEAK_SECONDS (10)  the closed-loop peak runs
#   SOAK_RATE_PERCENT (80)     the fixed rate, in % of the peak
#   SOAK_CONNECTIONS (128)     wrk connections of the fixed-rate runs
#   SOAK_WARMUP_SECONDS (10) SOAK_SETTLE_SECONDS (5) SOAK_WRK_THREADS (1)
#   SOAK_KEEP=1                keep the temp dir (logs, wrk output)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
root=$bench_root
bench_build_dir "${1:-}"
slices=${SOAK_MINUTES:-10}
slice_s=${SOAK_SLICE_SECONDS:-60}
gap_s=${SOAK_GAP_SECONDS:-120}
fault_s=${SOAK_FAULT_SECONDS:-30}
peak_conns_list=${SOAK_PEAK_CONNECTIONS:-16 64 128}
peak_s=${SOAK_PEAK_SECONDS:-10}
rate_percent=${SOAK_RATE_PERCENT:-80}
conns=${SOAK_CONNECTIONS:-128}
warmup_s=${SOAK_WARMUP_SECONDS:-10}
settle_s=${SOAK_SETTLE_SECONDS:-5}
wrk_threads=${SOAK_WRK_THREADS:-1}
ns=bench
path=/apis/metrics.k8s.io/v1beta1/namespaces/$ns/pods
# The target: resident memory grows less than this between the end of
# load slice 2 and the end of the last one, in %.
max_rss_growth=5
# The faults, in turn, each on another member: fast failures (connection
# refused, garbage JSON, a certificate the member's CA did not sign, 500s)
# and one that holds every answer until serve's 3 s member deadline
# (blackhole). The pods list of namespace bench has pods on every member, so
# with one member failing the answer is still possible: 200 with a Warning
# naming it (a 503 only when no member could serve: docs/api.md).
faults=('{"refuse":true}' '{"malformedJson":true}' '{"wrongCertificate":true}' '{"blackhole":true}' '{"errorRate":1}')

[ "$slices" -ge 2 ] || { echo "soak: SOAK_MINUTES must be at least 2 (the memory target starts at slice 2)" >&2; exit 1; }
need_fedmetrics soak
for tool in wrk curl awk find; do
  command -v "$tool" >/dev/null || { echo "soak: $tool not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
done

bench_init soak "${SOAK_KEEP:-0}"
echo "soak: temp dir $tmp" >&2
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# ---------------------------------------------------------------------------
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
log "starting the 10-member world and fedmetrics serve over it"
start_world w10 "$root/bench/worlds/ten.yaml"
sim_pid=$world_pid
start_serve serve w10
base=${serve_url%"$path"}
control=$(control_url w10)
[ -n "$control" ] || fail "no control endpoint in $tmp/w10.log"
mapfile -t members < <(grep -o 'member [^ ]* serving on' "$tmp/w10.log" | awk '{ print $2 }')
[ "${#members[@]}" -ge 2 ] || fail "fewer than 2 members in $tmp/w10.log"
token=$(awk '$1 == "token:" { print $2; exit }' "$tmp/w10/members.kubeconfig")

# run_wrk NAME CONNECTIONS SECONDS RATE: one wrk run (RATE 0: closed loop);
# its "soak:" line goes to $tmp/NAME.figures. Bounded: wrk stops itself after
# SECONDS, `timeout` is the backstop.
run_wrk() {
  local name=$1 c=$2 s=$3 rate=$4
  alive "$serve_pid" "$tmp/serve.log" "fedmetrics serve"
  alive "$sim_pid" "$tmp/w10.log" "fedmetrics sim"
  timeout $((s + 60)) wrk -t"$wrk_threads" -c"$c" -d"${s}s" --timeout 30s --latency -s "$root/bench/soak.lua" \
    -H "Authorization: Bearer $token" "$serve_url" -- "$rate" "$wrk_threads" >"$tmp/$name.wrk" 2>&1 ||
    { cat "$tmp/$name.wrk" >&2; fail "wrk ($name) failed"; }
  grep '^soak: ' "$tmp/$name.wrk" >"$tmp/$name.figures" || { cat "$tmp/$name.wrk" >&2; fail "wrk ($name) printed no figures"; }
}
# fig NAME KEY: one figure of a run.
fig() { tr ' ' '\n' <"$tmp/$1.figures" | awk -F= -v k="$2" '$1 == k { print $2 }'; }
rps() { awk -v n="$(fig "$1" requests)" -v d="$(fig "$1" duration_us)" 'BEGIN { printf "%.1f", (d > 0 ? n * 1e6 / d : 0) }'; }
# errors NAME: answers other than 200 and transport errors (connect, read, write, timeout).
errors() { echo $(($(fig "$1" non200) + $(fig "$1" connect) + $(fig "$1" read) + $(fig "$1" write) + $(fig "$1" timeout))); }

# member_connections: serve's open connections to members (every member;
# the idle ones are among them), from its /metrics.
member_connections() {
  curl -sk --max-time 10 -H "Authorization: Bearer $token" "$base/metrics" >"$tmp/metrics" || fail "no $base/metrics"
  awk '/^fedmetrics_member_client_connections[{].*state="open"/ { s += $NF; n++ } END { if (n) print s }' "$tmp/metrics"
}
metric_sum() { awk -v m="$1" 'index($0, m) == 1 { s += $NF } END { print s + 0 }' "$tmp/metrics"; }

# sample LABEL: serve's VmRSS (KiB) and open fds now, appended to
# $tmp/samples with the time (printed relative to t1, when load slice 1 began).
sample() {
  alive "$serve_pid" "$tmp/serve.log" "fedmetrics serve"
  echo "$1 $(now) $(kib "$serve_pid" VmRSS) $(open_fds "$serve_pid")" >>"$tmp/samples"
}
# quiet_fds: fds and member connections once the load has stopped: the
# clients' connections closed after SOAK_SETTLE_SECONDS, then /metrics read
# (its own connection closed again before the count). Sets quiet_fds_n and
# quiet_members (connections to members).
quiet_fds() {
  sleep "$settle_s"
  quiet_members=$(member_connections)
  [ -n "$quiet_members" ] || fail "no fedmetrics_member_client_connections in $base/metrics"
  sleep 1
  quiet_fds_n=$(open_fds "$serve_pid")
}

# ---------------------------------------------------------------------------
# The peak: closed loops at a few connection counts (Little's law: one count
# alone caps the rate at connections / latency).
peak=0
peak_c=0
for c in $peak_conns_list; do
  log "peak: closed loop, $c connections, ${peak_s}s"
  run_wrk "peak.c$c" "$c" "$peak_s" 0
  r=$(rps "peak.c$c")
  log "  $r req/s, p50 $(fig "peak.c$c" p50_us) us, errors $(errors "peak.c$c"), warned $(fig "peak.c$c" warned)"
  if awk -v a="$r" -v b="$peak" 'BEGIN { exit !(a > b) }'; then peak=$r peak_c=$c; fi
done
rate=$(awk -v p="$peak" -v f="$rate_percent" 'BEGIN { printf "%d", p * f / 100 }')
[ "$rate" -gt 0 ] || fail "no peak measured"
log "peak $peak req/s (at $peak_c connections); the soak runs at $rate req/s ($rate_percent %) on $conns connections"

: >"$tmp/samples"
log "warm-up: ${warmup_s}s at $rate req/s"
run_wrk warmup "$conns" "$warmup_s" "$rate"
quiet_fds
fds_start=$quiet_fds_n mc_start=$quiet_members
sample start
log "start: VmRSS $(kib "$serve_pid" VmRSS) KiB, $fds_start fds ($mc_start to members)"

# The fault toggler: at t1 + k * SOAK_FAULT_SECONDS, even k sets fault k/2
# (kinds and members in turn), odd k clears it. Each change is a line of
# $tmp/faults.log: "SECONDS on|off MEMBER FAULT HTTP_CODE".
toggle_faults() {
  local k=0 j member fault code due sleeper=""
  trap '[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null; exit 0' TERM
  while :; do
    due=$(awk -v t0="$t1" -v k="$k" -v p="$fault_s" -v now="$(now)" 'BEGIN { d = t0 + k * p - now; printf "%.3f", (d > 0 ? d : 0) }')
    sleep "$due" &
    sleeper=$!
    wait "$sleeper"
    j=$((k / 2))
    member=${members[$(((j * 3) % ${#members[@]}))]}
    fault=${faults[$((j % ${#faults[@]}))]}
    if [ $((k % 2)) -eq 0 ]; then
      code=$(curl -sk --max-time 5 -o /dev/null -w '%{http_code}' -X PUT "$control/sim/v1/members/$member/faults" -d "$fault" || true)
      echo "$(elapsed "$t1") on $member $fault $code" >>"$tmp/faults.log"
    else
      code=$(curl -sk --max-time 5 -o /dev/null -w '%{http_code}' -X DELETE "$control/sim/v1/members/$member/faults" || true)
      echo "$(elapsed "$t1") off $member - $code" >>"$tmp/faults.log"
    fi
    k=$((k + 1))
  done
}

# load_slice I: one slice at the fixed rate, its row's figures in $tmp/slice.I.
: >"$tmp/slices"
# A slice's memory is the median of VmRSS sampled every twelfth of it while
# the load runs: one sample moves by a few MB with the requests in flight at
# that instant (and with the 10 s trim), the median follows the level.
rss_every=$((slice_s / 12 > 0 ? slice_s / 12 : 1))
rss_sampler() { # FILE: serve's VmRSS every rss_every seconds, until stopped
  local sleeper=""
  trap '[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null; exit 0' TERM
  while :; do
    sleep "$rss_every" &
    sleeper=$!
    wait "$sleeper"
    kib "$serve_pid" VmRSS >>"$1" 2>/dev/null || true
  done
}
load_slice() {
  local a sampler
  a=$(elapsed "$t1")
  log "load slice $1 of $slices: ${slice_s}s at $rate req/s"
  : >"$tmp/rss.$1"
  rss_sampler "$tmp/rss.$1" &
  sampler=$!
  pids+=("$sampler")
  run_wrk "slice.$1" "$conns" "$slice_s" "$rate"
  stop_pids "$sampler"
  echo "$1 $a $(elapsed "$t1")" >>"$tmp/slices"
  sample "slice$1"
}

t1=$(now)
: >"$tmp/faults.log"
toggle_faults &
toggler_pid=$!
pids+=("$toggler_pid")
half=$((slices / 2))
for i in $(seq 1 "$half"); do load_slice "$i"; done
sample gap-start
left=$gap_s
log "idle gap: ${gap_s}s without a request (pooled member connections idle past the client's 45 s)"
while [ "$left" -gt 0 ]; do
  step=$((left < slice_s ? left : slice_s))
  sleep "$step"
  left=$((left - step))
  sample "gap-$((gap_s - left))s"
done
for i in $(seq $((half + 1)) "$slices"); do load_slice "$i"; done
stop_pids "$toggler_pid"
for m in "${members[@]}"; do
  code=$(curl -sk --max-time 5 -o /dev/null -w '%{http_code}' -X DELETE "$control/sim/v1/members/$m/faults" || true)
  [ "$code" = 200 ] || fail "clearing the faults of $m: HTTP $code"
done
log "faults cleared; settling ${settle_s}s"
quiet_fds
fds_end=$quiet_fds_n mc_end=$quiet_members
sample end
idle_closed=$(metric_sum fedmetrics_member_client_idle_connections_closed_total)
retries=$(metric_sum fedmetrics_member_client_retries_total)
if grep -qv ' 200$' "$tmp/faults.log"; then cat "$tmp/faults.log" >&2; fail "a fault could not be set or cleared"; fi

# ---------------------------------------------------------------------------
# faults_during A B: the faults that were on for more than a second of [A, B)
# (seconds since t1; a slice ends a little after the next toggle).
faults_during() {
  awk -v a="$1" -v b="$2" '
    $2 == "on" { t = $1; m = $3; f = $4; gsub(/[{}"]/, "", f); sub(/:true$/, "", f) }
    $2 == "off" && t != "" { if (t < b - 1 && $1 > a + 1) out = out (out ? " " : "") m ":" f; t = "" }
    END { if (t != "" && t < b - 1) out = out (out ? " " : "") m ":" f; print (out ? out : "-") }' "$tmp/faults.log"
}
rss_of() { awk -v l="$1" '$1 == l { print $3 }' "$tmp/samples"; }
# rss_median I: the median of slice I's VmRSS samples (its end sample if it has none).
rss_median() {
  if [ -s "$tmp/rss.$1" ]; then sort -n "$tmp/rss.$1" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
  else rss_of "slice$1"; fi
}
fds_of() { awk -v l="$1" '$1 == l { print $4 }' "$tmp/samples"; }

echo
echo "fedmetrics soak, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, loopback, load average at the start $load_start, at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo "query GET $path over ${#members[@]} members; source tree at $commit when it started; binary $fedmetrics"
printf 'peak (closed loop, %ss each):' "$peak_s"
for c in $peak_conns_list; do printf ' c%s %s req/s (errors %s);' "$c" "$(rps "peak.c$c")" "$(errors "peak.c$c")"; done
echo
echo "fixed rate: $rate req/s ($rate_percent % of $peak) on $conns connections, wrk -t$wrk_threads; $slices slices of ${slice_s}s, gap of ${gap_s}s after slice $half; a fault toggled every ${fault_s}s"
echo "warm-up: $(rps warmup) req/s achieved, errors $(errors warmup)"
echo
echo "VmRSS: the median of the slice's samples, one every ${rss_every}s; fds: after the slice"
printf '| %5s | %8s | %8s | %6s | %8s | %8s | %6s | %6s | %6s | %9s | %4s | %s\n' \
  slice requests "req/s" "% rate" "p50 ms" "p99 ms" non200 warned errors "VmRSS KiB" fds "faults on"
total_requests=0 total_errors=0 total_warned=0 total_non200=0
for i in $(seq 1 "$slices"); do
  n="slice.$i"
  read -r _ a b < <(awk -v i="$i" '$1 == i' "$tmp/slices")
  r=$(rps "$n")
  printf '| %5s | %8s | %8s | %6s | %8.2f | %8.2f | %6s | %6s | %6s | %9s | %4s | %s\n' \
    "$i" "$(fig "$n" requests)" "$r" "$(awk -v r="$r" -v t="$rate" 'BEGIN { printf "%.0f", 100 * r / t }')" \
    "$(awk -v v="$(fig "$n" p50_us)" 'BEGIN { print v / 1000 }')" "$(awk -v v="$(fig "$n" p99_us)" 'BEGIN { print v / 1000 }')" \
    "$(fig "$n" non200)" "$(fig "$n" warned)" "$(errors "$n")" "$(rss_median "$i")" "$(fds_of "slice$i")" "$(faults_during "$a" "$b")"
  total_requests=$((total_requests + $(fig "$n" requests)))
  total_errors=$((total_errors + $(errors "$n")))
  total_warned=$((total_warned + $(fig "$n" warned)))
  total_non200=$((total_non200 + $(fig "$n" non200)))
  codes=$(fig "$n" codes)
  if [ "$(errors "$n")" -gt 0 ]; then
    echo "|       slice $i: codes $codes; connect $(fig "$n" connect) read $(fig "$n" read) write $(fig "$n" write) timeout $(fig "$n" timeout)"
  fi
done
echo
echo "serve's resident memory and fds (seconds since load slice 1 began):"
awk -v t1="$t1" '{ printf "  %-12s %7.1f s  VmRSS %7d KiB  fds %4d\n", $1, $2 - t1, $3, $4 }' "$tmp/samples"
echo "  quiet (no load, ${settle_s}s settle): start $fds_start fds ($mc_start of them to members), end $fds_end fds ($mc_end to members)"
echo "  member connections closed idle or found closed: $idle_closed; requests retried on a new connection: $retries"
echo "fault changes (seconds since the first slice began):"
sed 's/^/  /' "$tmp/faults.log"
echo
rss2=$(rss_median 2)
rss_last=$(rss_median "$slices")
growth=$(awk -v a="$rss2" -v b="$rss_last" 'BEGIN { printf "%.2f", (b - a) * 100 / a }')
verdict() { if [ "$1" = 1 ]; then echo PASS; else echo FAIL; fi; }
echo "targets:"
printf '  %-66s %s\n' "errors (non-200 answers, transport errors) over $total_requests requests: $total_errors (0)" \
  "$(verdict $((total_errors == 0)))"
printf '  %-66s %s\n' "answers with a Warning (a faulted member left out; expected): $total_warned" "(info)"
printf '  %-66s %s\n' "VmRSS growth (slice medians), slice 2 -> slice $slices: $rss2 -> $rss_last KiB, $growth % (< $max_rss_growth %)" \
  "$(verdict "$(awk -v g="$growth" -v m="$max_rss_growth" 'BEGIN { print (g < m) ? 1 : 0 }')")"
# Connections to members come and go with the faults and the load (at most
# 8 per member); every other fd must be back where it was.
other_start=$((fds_start - mc_start))
other_end=$((fds_end - mc_end))
printf '  %-66s %s\n' "fds at rest, start -> end: $fds_start -> $fds_end; not to members: $other_start -> $other_end (<=)" \
  "$(verdict $((other_end <= other_start && mc_end <= 8 * ${#members[@]})))"
log "done"

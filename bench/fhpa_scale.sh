#!/usr/bin/env bash
# The autoscaling loop's size targets: how much of one core and how much
# memory `fedmetrics serve --enable-autoscaler` needs to keep N FederatedHPAs
# on their sync cadence against a simulated world. The targets: 10,000
# FederatedHPAs over 100 members (each Deployment on 2 to 5 of them) at 15 s
# within 0.5 of one core and 300 MiB resident; before that, 1,000 over 10
# members within 0.20 of one core.
#
# Generates a world of MEMBERS members and FHPAS Deployments (REPLICAS
# replicas each over SPREAD members, cpu requested and loaded so that the
# utilization sits on the target and nothing rescales), starts `fedmetrics sim
# -v` on it, creates one FederatedHPA per Deployment with one `kubectl create
# -f`, starts `fedmetrics serve --enable-autoscaler` with its default flags
# (sync period 15 s, 5 concurrent syncs, leader election on), waits for the
# first complete pass and one more period, then measures for MEASURE seconds:
#   - cpu of the serve process (utime+stime from /proc/PID/stat) / wall time,
#     per period-long slice (median, mean, min, max) and over the window;
#   - its resident memory (VmRSS at the end, VmHWM);
#   - the cadence, from the simulated control plane's request log: every sync
#     ends with one PATCH of the FederatedHPA's status subresource (sent even
#     when the status is unchanged), so the status PATCHes per pass, per
#     FederatedHPA in the window, and the longest interval between two syncs of
#     one FederatedHPA say whether every object was synced once per period;
#     the server's fedmetrics_aggregator_queries_total is the cross-check;
#   - the requests the simulator saw in the window, by kind (the members' pod
#     lists, pod watches and pod metrics; the control plane's scale and
#     binding reads and status writes): in all, per sync, and per member and
#     period.
# Prints the figures as tables and the targets with PASS/FAIL. Exit status 0
# even when a target fails; 1 only when something could not be measured.
#
# Usage: bash bench/fhpa_scale.sh [--members N] [--fhpas N] [--spread K|A-B]
#          [--replicas N] [--period S] [--measure S] [BUILD_DIR]
#   BUILD_DIR defaults to build/ (builds nothing). The target's size:
#   bash bench/fhpa_scale.sh --members 100 --fhpas 10000 --spread 2-5 --replicas 4
# Environment (the options' defaults): FHPA_MEMBERS (10) FHPA_COUNT (1000)
#              FHPA_SPREAD (2) FHPA_REPLICAS (2) FHPA_SYNC_PERIOD (15, seconds)
#              FHPA_MEASURE_SECONDS (60) FHPA_SERVE_FLAGS (extra serve flags, e.g.
#              "--concurrent-horizontal-pod-autoscaler-syncs 20 --member-qps 100")
#              FHPA_KEEP=1 (keep the temp dir: world, sim.log, serve.log, samples)
#              FHPA_MODE=distributed (every FederatedHPA annotated
#              autoscaling.fedmetrics.io/mode: distributed: the loop keeps one
#              member HPA per member instead of reading metrics and scaling;
#              docs/distributed-mode.md). Default centralized.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
count=${FHPA_COUNT:-1000}
nmembers=${FHPA_MEMBERS:-10}
measure=${FHPA_MEASURE_SECONDS:-60}
period=${FHPA_SYNC_PERIOD:-15}
spread=${FHPA_SPREAD:-2}
replicas=${FHPA_REPLICAS:-2}
build_dir=build
while [ $# -gt 0 ]; do
  case "$1" in
    --members) nmembers=$2; shift 2 ;;
    --fhpas) count=$2; shift 2 ;;
    --spread) spread=$2; shift 2 ;;
    --replicas) replicas=$2; shift 2 ;;
    --period) period=$2; shift 2 ;;
    --measure) measure=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fhpa_scale: unknown option '$1' (--help)" >&2; exit 1 ;;
    *) build_dir=$1; shift ;;
  esac
done
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
bin="$build_dir/fedmetrics"
read -r -a extra_flags <<<"${FHPA_SERVE_FLAGS:-}"
mode=${FHPA_MODE:-centralized}
case "$mode" in centralized|distributed) ;; *) echo "fhpa_scale: FHPA_MODE must be centralized or distributed, not '$mode'" >&2; exit 1 ;; esac
ns=fhpa
# The targets: 10,000 over 100 members within 0.5 core and 300 MiB; 1,000
# over 10 within 0.20 core (no memory target). Another size: informative.
target_period=15
if [ "$count" = 10000 ] && [ "$nmembers" = 100 ]; then
  target_count=10000 target_members=100 max_cpu=0.50 max_mib=300
else
  target_count=1000 target_members=10 max_cpu=0.20 max_mib=""
fi

[[ $spread =~ ^[1-9][0-9]*(-[1-9][0-9]*)?$ ]] || { echo "fhpa_scale: --spread must be K or A-B, not '$spread'" >&2; exit 1; }
for v in count nmembers measure period replicas; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "fhpa_scale: $v must be a positive integer, not '${!v}'" >&2; exit 1; }
done
[ "$nmembers" -ge 2 ] || { echo "fhpa_scale: FHPA_MEMBERS must be at least 2" >&2; exit 1; }
[ -x "$bin" ] || { echo "fhpa_scale: $bin not found; build first (bash scripts/build.sh)" >&2; exit 1; }
for tool in kubectl curl python3 getconf; do
  command -v "$tool" >/dev/null || { echo "fhpa_scale: $tool not found" >&2; exit 1; }
done
hz=$(getconf CLK_TCK)

bench_init fhpa_scale "${FHPA_KEEP:-0}"
work=$tmp
log "temp dir $work"

# ticks PID: utime+stime in clock ticks (fields 14 and 15, counted after the ")" of comm).
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }

# ---------------------------------------------------------------------------
# The world: Deployment wK on SPREAD members (equal weights), REPLICAS replicas
# of 100m cpu requested, 50m of load each + the 1m baseline, 51 % of the request.
# The FederatedHPAs target 50 %: a ratio of 1.02, inside the 0.1 tolerance,
# so every sync ends with "recommended size matches current size".
log "world: $nmembers members, $count Deployments in namespace $ns over $spread members each ($((count * replicas)) pods)"
bash "$root/bench/gen-world.sh" --members "$nmembers" --nodes 2 --deployments "$count" --spread "$spread" --replicas "$replicas" \
  --namespace "$ns" --fhpa-out "$work/fhpa.yaml" --fhpa-mode "$mode" >"$work/world.yaml"

# -v: the simulator logs every request with its time (the cadence comes from it).
"$bin" sim -v --world "$work/world.yaml" --out-dir "$work/world" >"$work/sim.log" 2>&1 &
sim_pid=$!
pids+=("$sim_pid")
wait_for "$work/sim.log" "world ready" 60
sim_ms=$(grep -o 'world ready in [0-9]* ms' "$work/sim.log" | grep -o '[0-9]*' | head -1)
karmada_kubeconfig="$work/world/karmada.kubeconfig"
kk() { kubectl --kubeconfig "$karmada_kubeconfig" --request-timeout=30s "$@"; }

log "creating $count FederatedHPAs (one kubectl create -f)"
t_create0=$(date +%s.%N)
timeout 900 kubectl --kubeconfig "$karmada_kubeconfig" --request-timeout=30s create -f "$work/fhpa.yaml" \
  >"$work/create.log" 2>&1 || { tail -20 "$work/create.log" >&2; fail "kubectl create -f of $count FederatedHPAs failed"; }
t_create1=$(date +%s.%N)
created=$(kk get federatedhpas -n "$ns" --no-headers 2>/dev/null | wc -l)
[ "$created" -eq "$count" ] || fail "the control plane lists $created FederatedHPAs in $ns, not $count"
create_s=$(awk -v a="$t_create0" -v b="$t_create1" 'BEGIN { printf "%.1f", b - a }')
log "created in $create_s s"

log "fedmetrics serve --enable-autoscaler (sync period ${period}s${extra_flags[*]:+, ${extra_flags[*]}})"
"$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$work/certs" \
  --insecure-development-no-auth --member-kubeconfig "$work/world/members.kubeconfig" \
  --enable-autoscaler --kubeconfig "$karmada_kubeconfig" \
  --horizontal-pod-autoscaler-sync-period "${period}s" "${extra_flags[@]}" >"$work/serve.log" 2>&1 &
serve_pid=$!
pids+=("$serve_pid")
wait_for "$work/serve.log" "serving on https://127.0.0.1:" 30
serve_url=$(grep -o 'serving on https://127.0.0.1:[0-9]*' "$work/serve.log" | head -1 | sed 's/serving on //')
t_serve=$(date +%s)
queries() { curl -sk --max-time 10 "$serve_url/metrics" | awk '$1 == "fedmetrics_aggregator_queries_total" { print $2 }'; }

# how many of our FederatedHPAs had a status PATCH so far
patched() {
  grep -o "karmada PATCH /apis/autoscaling.karmada.io/v1alpha1/namespaces/$ns/federatedhpas/[^/]*/status" "$work/sim.log" |
    sort -u | wc -l
}
# Warm-up: the first complete pass (the first tick passes while the Lease is
# taken), bounded by four periods plus a second per 20 FederatedHPAs, then one
# more period so that the window starts in the steady state.
deadline=$((t_serve + 4 * period + count / 20 + 10))
log "warm-up: waiting for a status PATCH of every FederatedHPA (at most $((deadline - t_serve)) s)"
first_pass=""
while [ "$(date +%s)" -lt "$deadline" ]; do
  alive "$serve_pid" "$work/serve.log" "fedmetrics serve"
  alive "$sim_pid" "$work/sim.log" "fedmetrics sim"
  if [ "$(patched)" -ge "$count" ]; then first_pass=$(($(date +%s) - t_serve)); break; fi
  sleep 1
done
if [ -z "$first_pass" ]; then
  log "WARNING: after $((deadline - t_serve)) s only $(patched) of $count FederatedHPAs had a status PATCH; measuring anyway"
  first_pass="> $((deadline - t_serve))"
else
  log "every FederatedHPA synced once, $first_pass s after serve started; one more period of warm-up"
  sleep "$period"
fi

# ---------------------------------------------------------------------------
log "measuring for $measure s"
q0=$(queries)
[ -n "$q0" ] || fail "no fedmetrics_aggregator_queries_total in $serve_url/metrics"
: >"$work/samples"
t0=$(date +%s.%N)
for s in $(seq 0 "$measure"); do
  alive "$serve_pid" "$work/serve.log" "fedmetrics serve"
  alive "$sim_pid" "$work/sim.log" "fedmetrics sim"
  echo "$(date +%s.%N) $(ticks "$serve_pid") $(ticks "$sim_pid")" >>"$work/samples"
  [ "$s" -eq "$measure" ] && break
  # sleep until t0 + s + 1
  sleep "$(awk -v t0="$t0" -v s="$s" -v now="$(date +%s.%N)" 'BEGIN { d = t0 + s + 1 - now; printf "%.3f", (d > 0 ? d : 0) }')"
done
t1=$(date +%s.%N)
q1=$(queries)
rss=$(kib "$serve_pid" VmRSS)
hwm=$(kib "$serve_pid" VmHWM)
sim_rss=$(kib "$sim_pid" VmRSS)
threads=$(kib "$serve_pid" Threads)
[ -n "$q1" ] || fail "no fedmetrics_aggregator_queries_total in $serve_url/metrics at the end"

# ---------------------------------------------------------------------------
python3 - "$work/samples" "$work/sim.log" "$t0" "$t1" "$period" "$count" "$hz" "$ns" "$nmembers" >"$work/figures" <<'PY'
import re, statistics, sys, time
samples_file, sim_log, t0, t1, period, count, hz, ns, nmembers = sys.argv[1:]
t0, t1, period, count, hz, nmembers = float(t0), float(t1), float(period), int(count), float(hz), int(nmembers)

# cpu: period-long slices of the one-second samples
rows = [tuple(map(float, l.split())) for l in open(samples_file) if l.strip()]
def fractions(col):
    out, i = [], 0
    while True:
        j = next((k for k in range(i, len(rows)) if rows[k][0] - rows[i][0] >= period - 0.5), None)
        if j is None: break
        out.append((rows[j][col] - rows[i][col]) / hz / (rows[j][0] - rows[i][0]))
        i = j
    whole = (rows[-1][col] - rows[0][col]) / hz / (rows[-1][0] - rows[0][0])
    return out or [whole], whole
cpu, cpu_all = fractions(1)
sim_cpu, sim_all = fractions(2)

# cadence: the simulated control plane's request log
line = re.compile(r'^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3})\] \[sim\] \[debug\] karmada (\S+) (\S+) -> (\d+)')
patch = re.compile(r'^/apis/autoscaling\.karmada\.io/v1alpha1/namespaces/' + re.escape(ns) + r'/federatedhpas/([^/?]+)/status$')
lists, syncs, errors, codes = [], {}, 0, {}
# every request in the window by peer, the Lease and member health checks left out
anyline = re.compile(r'^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3})\] \[sim\] \[debug\] (karmada|member\d+) (\S+) (\S+) -> (\d+)')
requests = {'karmada': 0, 'member': 0}
# ... and by kind
def kind_of(peer, method, path):
    bare = path.split('?')[0]
    if peer != 'karmada':
        if bare.endswith('/pods') and bare.startswith('/api/v1'):
            return 'member: pod watches' if 'watch=true' in path else 'member: pod lists'
        if bare.startswith('/apis/metrics.k8s.io/'): return 'member: pod metrics'
        return 'member: other'
    if bare.endswith('/scale'): return 'control plane: scale reads'
    if '/resourcebindings/' in bare: return 'control plane: binding reads'
    if method == 'PATCH' and bare.endswith('/status'): return 'control plane: status writes'
    return 'control plane: other'
kinds = {k: 0 for k in ['member: pod lists', 'member: pod watches', 'member: pod metrics', 'member: other',
                        'control plane: scale reads', 'control plane: binding reads',
                        'control plane: status writes', 'control plane: other']}
for l in open(sim_log, errors='replace'):
    a = anyline.match(l)
    if a:
        ta = time.mktime(time.strptime(a.group(1), '%Y-%m-%d %H:%M:%S')) + int(a.group(2)) / 1000
        if t0 <= ta < t1 and '/leases/' not in a.group(5) and not a.group(5).startswith(('/readyz', '/livez', '/healthz')):
            requests['karmada' if a.group(3) == 'karmada' else 'member'] += 1
            kinds[kind_of(a.group(3), a.group(4), a.group(5))] += 1
    m = line.match(l)
    if not m: continue
    t = time.mktime(time.strptime(m.group(1), '%Y-%m-%d %H:%M:%S')) + int(m.group(2)) / 1000
    method, path, code = m.group(3), m.group(4), int(m.group(5))
    if method == 'GET' and path.split('?')[0] == '/apis/autoscaling.karmada.io/v1alpha1/federatedhpas':
        lists.append(t)
    elif method == 'PATCH' and patch.match(path):
        syncs.setdefault(patch.match(path).group(1), []).append(t)
        if t0 <= t < t1: codes[code] = codes.get(code, 0) + 1
    if code >= 300 and t0 <= t < t1:
        errors += 1
in_window = {k: [t for t in v if t0 <= t < t1] for k, v in syncs.items()}
per_hpa = [len(in_window.get(f'w{i}', [])) for i in range(1, count + 1)]
window = t1 - t0
total = sum(per_hpa)
# passes: the loop reads the FederatedHPAs from its watch, not from a list
# per tick, so a pass is a burst of status PATCHes; a pause longer than half
# a period starts the next one. Counted: the passes that start in the window
# with a whole period left in it (so that they cannot be cut by its end).
passes = []
all_patches = sorted(t for v in syncs.values() for t in v)
bursts = []
for t in all_patches:
    if bursts and t - bursts[-1][-1] <= period / 2: bursts[-1].append(t)
    else: bursts.append([t])
for b in bursts:
    if t0 <= b[0] and b[0] + period <= t1:
        passes.append((len(b), b[-1] - b[0]))
lists_in_window = sum(1 for t in lists if t0 <= t < t1)
# the longest interval between two syncs of one FederatedHPA, over the window
# (the sync before the window counts as the start of the first interval)
gaps = []
for i in range(1, count + 1):
    ts = syncs.get(f'w{i}', [])
    before = [t for t in ts if t < t0]
    inside = [t for t in ts if t0 <= t < t1]
    seq = ([before[-1]] if before else []) + inside
    g = [b - a for a, b in zip(seq, seq[1:])]
    if inside: g.append(t1 - inside[-1])  # still waiting at the end of the window
    else: g.append(t1 - (before[-1] if before else t0))
    gaps.append(max(g))
def fmt(x): return f'{x:.3f}'
print('cpu_median', fmt(statistics.median(cpu)))
print('cpu_mean', fmt(cpu_all))
print('cpu_min', fmt(min(cpu)))
print('cpu_max', fmt(max(cpu)))
print('cpu_slices', len(cpu))
print('per_core', f'{count / statistics.median(cpu):.0f}' if statistics.median(cpu) > 0 else 'inf')
print('sim_cpu', fmt(sim_all))
print('window', f'{window:.1f}')
print('periods', f'{window / period:.2f}')
print('syncs_total', total)
print('syncs_per_period', f'{total / (window / period):.0f}')
print('per_hpa_min', min(per_hpa))
print('per_hpa_max', max(per_hpa))
print('never_synced', sum(1 for c in per_hpa if c == 0))
print('passes', len(passes))
print('lists_in_window', lists_in_window)
print('pass_min_syncs', min((p[0] for p in passes), default=0))
print('pass_median_s', f'{statistics.median([p[1] for p in passes]):.1f}' if passes else 'nan')
print('pass_max_s', f'{max(p[1] for p in passes):.1f}' if passes else 'nan')
print('gap_max', f'{max(gaps):.1f}')
print('gap_p99', f'{sorted(gaps)[int(0.99 * (len(gaps) - 1))]:.1f}')
print('cp_requests_per_sync', f"{requests['karmada'] / total:.1f}" if total else 'nan')
print('member_requests_per_sync', f"{requests['member'] / total:.1f}" if total else 'nan')
periods = window / period
for k, n in kinds.items():
    slug = re.sub(r'[^a-z]+', '_', k)
    print('kind_' + slug, n, f'{n / total:.3f}' if total else 'nan', f'{n / nmembers / periods:.2f}' if k.startswith('member') else '-', k.replace(' ', '_'))
print('member_requests_per_member_period', f"{requests['member'] / nmembers / periods:.2f}")
print('patch_errors', sum(n for c, n in codes.items() if c >= 300))
print('cp_errors', errors)
PY
fig() { awk -v k="$1" '$1 == k { print $2 }' "$work/figures"; }
[ -n "$(fig cpu_median)" ] || fail "could not compute the figures"

warnings=$(grep -c '\[warning\]' "$work/serve.log" || true)
# the two start-up warnings of --insecure-development-no-auth and the self-signed certificate
warnings=$((warnings > 2 ? warnings - 2 : 0))
queries_per_period=$(awk -v a="$q0" -v b="$q1" -v w="$(fig window)" -v p="$period" 'BEGIN { printf "%.0f", (b - a) / (w / p) }')
expected=$(awk -v w="$(fig window)" -v p="$period" 'BEGIN { printf "%d", w / p }')
# Cadence held: every pass that started in the window wrote every status, and
# no FederatedHPA waited more than 1.5 periods between two syncs.
cadence=PASS
[ "$(fig pass_min_syncs)" -ge "$count" ] && [ "$(fig passes)" -ge 1 ] || cadence=FAIL
awk -v g="$(fig gap_max)" -v p="$period" 'BEGIN { exit !(g <= 1.5 * p) }' || cadence=FAIL
cpu_verdict=$(awk -v c="$(fig cpu_median)" -v m="$max_cpu" 'BEGIN { print (c <= m) ? "PASS" : "FAIL" }')
mem_verdict=PASS
[ -z "$max_mib" ] || [ $((hwm / 1024)) -le "$max_mib" ] || mem_verdict=FAIL
if [ "$cadence" = PASS ] && [ "$cpu_verdict" = PASS ] && [ "$mem_verdict" = PASS ]; then target=PASS; else target=FAIL; fi
# The figures bench/scale.sh reads (lib.sh's bench_result: only when BENCH_RESULTS names a file).
bench_result "fhpa.cpu=$(fig cpu_median)" "fhpa.rss_mib=$((rss / 1024))" "fhpa.hwm_mib=$((hwm / 1024))" \
  "fhpa.gap_max_s=$(fig gap_max)" "fhpa.cadence=$cadence" "fhpa.member_requests_per_sync=$(fig member_requests_per_sync)"
note=""
if [ "$count" != "$target_count" ] || [ "$nmembers" != "$target_members" ] || [ "$period" != "$target_period" ]; then
  note=" (not the target's size: N=$count, $nmembers members, ${period}s; informative only)"
fi

echo
echo "fedmetrics FederatedHPA scale, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, loadavg $(cut -d' ' -f1-3 /proc/loadavg), loopback"
echo "serve flags: --enable-autoscaler --horizontal-pod-autoscaler-sync-period ${period}s ${extra_flags[*]:-(defaults otherwise)}"
echo "mode: $mode$([ "$mode" = distributed ] && echo " (autoscaling.fedmetrics.io/mode: distributed on every FederatedHPA)")"
echo
printf '| %-60s | %s\n' figure value
printf '|%s|%s\n' "$(printf -- '-%.0s' $(seq 62))" "--------"
printf '| %-60s | %s\n' "FederatedHPAs (Deployments, $replicas pods each over $spread members)" "$count"
printf '| %-60s | %s\n' "member clusters" "$nmembers"
printf '| %-60s | %s\n' "sync period" "${period} s"
printf '| %-60s | %s\n' "sim start to 'world ready'" "$sim_ms ms"
printf '| %-60s | %s\n' "kubectl create -f of every FederatedHPA" "$create_s s"
printf '| %-60s | %s\n' "serve start to every FederatedHPA synced once" "$first_pass s"
printf '| %-60s | %s\n' "measured window" "$(fig window) s ($(fig periods) periods)"
printf '| %-60s | %s\n' "serve cpu, fraction of one core, median of $(fig cpu_slices) period slices" "$(fig cpu_median)"
printf '| %-60s | %s\n' "serve cpu, over the whole window (min / max slice)" "$(fig cpu_mean) ($(fig cpu_min) / $(fig cpu_max))"
printf '| %-60s | %s\n' "FederatedHPAs per core at this cadence (N / cpu, linear)" "$(fig per_core)"
printf '| %-60s | %s\n' "serve resident (VmRSS at the end / VmHWM)" "$((rss / 1024)) / $((hwm / 1024)) MiB"
printf '| %-60s | %s\n' "serve threads" "$threads"
printf '| %-60s | %s\n' "status PATCHes (syncs) per period, expected $count" "$(fig syncs_per_period)"
printf '| %-60s | %s\n' "aggregator queries per period (cross-check; 0 when distributed)" "$queries_per_period"
printf '| %-60s | %s\n' "requests per sync: control plane / members (no Lease, no health)" \
  "$(fig cp_requests_per_sync) / $(fig member_requests_per_sync)"
printf '| %-60s | %s\n' "passes started in the window / fewest syncs in one" "$(fig passes) / $(fig pass_min_syncs)"
printf '| %-60s | %s\n' "pass duration, first to last status PATCH (median / max)" "$(fig pass_median_s) / $(fig pass_max_s) s"
printf '| %-60s | %s\n' "FederatedHPA lists in the window (the loop watches them)" "$(fig lists_in_window)"
printf '| %-60s | %s\n' "syncs of one FederatedHPA in the window (min / max, ~$expected)" "$(fig per_hpa_min) / $(fig per_hpa_max)"
printf '| %-60s | %s\n' "FederatedHPAs not synced in the window" "$(fig never_synced)"
printf '| %-60s | %s\n' "longest interval between syncs of one (max / p99)" "$(fig gap_max) / $(fig gap_p99) s"
printf '| %-60s | %s\n' "control-plane answers >= 300 in the window (status PATCHes)" "$(fig cp_errors) ($(fig patch_errors))"
printf '| %-60s | %s\n' "serve log warnings (past start-up)" "$warnings"
printf '| %-60s | %s\n' "sim cpu, fraction of one core (resident)" "$(fig sim_cpu) ($((sim_rss / 1024)) MiB)"
echo
echo "requests in the window (no Lease, no health), per sync, and per member and period:"
echo
printf '| %-32s | %8s | %8s | %s\n' "requests" "in all" "per sync" "per member and period"
printf '|%s|%s|%s|%s\n' "$(printf -- '-%.0s' $(seq 34))" "----------" "----------" "--------"
awk '$1 ~ /^kind_/ { k = $5; gsub(/_/, " ", k); printf "| %-32s | %8s | %8s | %s\n", k, $2, $3, $4 }' "$work/figures"
printf '| %-32s | %8s | %8s | %s\n' "every member request" "" "$(fig member_requests_per_sync)" "$(fig member_requests_per_member_period)"
if [ "$warnings" -gt 0 ]; then
  echo
  echo "first serve warnings:"
  grep '\[warning\]' "$work/serve.log" | sed -n '3,7p'
fi
echo
echo "targets$note:"
printf '  %-62s %s\n' "every FederatedHPA synced once per ${period} s (max interval <= $(awk -v p="$period" 'BEGIN { print 1.5 * p }') s):" "$cadence"
printf '  %-62s %s  %s\n' "cpu <= $max_cpu of one core with N=$count at ${period} s:" "$(fig cpu_median)" "$cpu_verdict"
[ -z "$max_mib" ] ||
  printf '  %-62s %s  %s\n' "resident (VmHWM) <= $max_mib MiB:" "$((hwm / 1024)) MiB" "$mem_verdict"
printf '  %-62s %s\n' "$target_count FederatedHPAs over $target_members members at ${target_period} s within $max_cpu of one core${max_mib:+ and $max_mib MiB}:" \
  "$([ -z "$note" ] && echo "$target" || echo "n/a ($target at this size)")"
log "done"

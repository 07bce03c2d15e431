#!/usr/bin/env bash
# Every scale figure of fedmetrics on this machine, as one table with each
# figure's target and PASS/FAIL (bench/README.md, "Scale"): the simulator's
# start-up and list cost, what one big merged pods answer costs serve, the
# FederatedHPA loop at its size, and a dead member's cost. It runs the bench
# scripts that measure them (sim_scale.sh, big_answer.sh, fhpa_scale.sh,
# dead_member.sh), each of which hands its figures over as KEY=VALUE lines
# (lib.sh's bench_result), and puts them together; their own tables are in
# the temp dir (--keep keeps it), their progress goes to stderr.
#
# Usage: bash bench/scale.sh [options] [BUILD_DIR]   (default build/; builds nothing)
#   --members N           members of every world but the dead member's (100)
#   --deployments N       Deployments of the simulator's start-up world (10000)
#   --pods-per-member N   pods on each member of the pods world and of the
#                         big answer (1000)
#   --fhpas N             FederatedHPAs of the loop, one Deployment each (10000)
#   --sync-period S       the loop's sync period, in seconds (15)
#   --quick               one run of each figure and shorter windows, instead
#                         of the medians of three runs
#   --keep                keep the temp dir (each script's table and figures)
#   -h, --help            this text
# The dead member's figure is always over the 10-member world
# (bench/worlds/ten.yaml). Environment: what each script reads passes
# through (FHPA_SERVE_FLAGS, BIG_SERVE_FLAGS, BENCH_MEMBER_TIMEOUT, ...).
# Exit status 0 even when a target fails; 1 when a figure could not be
# measured (its script failed: its output is in the temp dir, kept then);
# 2 on a bad option.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
root=$bench_root

members=100 deployments=10000 per_member=1000 fhpas=10000 period=15 quick=0 keep=0 build_arg=""
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
bad_usage() {
  echo "scale: $*" >&2
  usage >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --members | --deployments | --pods-per-member | --fhpas | --sync-period)
      [ $# -ge 2 ] || bad_usage "$1 needs a value"
      [[ $2 =~ ^[1-9][0-9]*$ ]] || bad_usage "$1 must be a positive whole number, not '$2'"
      case "$1" in
        --members) members=$2 ;;
        --deployments) deployments=$2 ;;
        --pods-per-member) per_member=$2 ;;
        --fhpas) fhpas=$2 ;;
        --sync-period) period=$2 ;;
      esac
      shift 2
      ;;
    --quick) quick=1; shift ;;
    --keep) keep=1; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) bad_usage "unknown option '$1'" ;;
    *) [ -z "$build_arg" ] || bad_usage "one build directory, not '$build_arg' and '$1'"; build_arg=$1; shift ;;
  esac
done
[ "$members" -ge 2 ] || bad_usage "--members must be at least 2 (the loop spreads each Deployment over two)"
bench_build_dir "$build_arg"
need_fedmetrics scale

# The targets (bench/README.md, "Scale"), at the sizes they are set for.
max_start_ms=5000      # the simulator ready, either world
max_list_ms=10         # the simulator's cpu for one member's list
max_query_cpu_ms=100   # serve's cpu per 100,000-pod query
max_growth_ratio=1.5   # serve's peak resident growth during a query / the answer's size
max_loop_cpu=0.5       # of one core
max_loop_mib=300       # serve's peak resident (VmHWM)
max_gap_periods=1.5    # the longest interval between two syncs of one FederatedHPA
max_dead_ratio=1.2     # merged p50 with one member black-holed / healthy p50
target_sizes="--members 100 --deployments 10000 --pods-per-member 1000 --fhpas 10000 --sync-period 15"

if [ "$quick" = 1 ]; then
  repeats=1 lists=5 queries=3 measure=$((3 * period)) dead_duration=3s
else
  repeats=3 lists=20 queries=10 measure=$((4 * period)) dead_duration=10s
fi

bench_init scale "$keep"
log "temp dir $tmp"
results=$tmp/figures
: >"$results"
load_start=$(cut -d' ' -f1 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%MZ)
failed=()

# run NAME ENV=VALUE...: bench/NAME.sh on the build with the given
# environment, its figures appended to $results, its table in $tmp/NAME.out
# and what it said on stderr (shown as it runs) in $tmp/NAME.err.
run() {
  local name=$1 status=0
  shift
  log "bench/$name.sh"
  env "$@" BENCH_RESULTS="$results" bash "$root/bench/$name.sh" "$build_dir" >"$tmp/$name.out" \
    2> >(tee "$tmp/$name.err" >&2) || status=$?
  if [ "$status" != 0 ]; then
    log "bench/$name.sh could not measure (exit $status); its output: $tmp/$name.out"
    failed+=("$name")
    bench_keep=1
  fi
}
run sim_scale BENCH_REPEATS=$repeats SIM_MEMBERS="$members" SIM_DEPLOYMENTS="$deployments" \
  SIM_PODS_PER_MEMBER="$per_member" SIM_LISTS=$lists
run big_answer BENCH_REPEATS=$repeats BIG_SIZES="${members}x$per_member" BIG_QUERIES=$queries BIG_KEEP=0
run fhpa_scale FHPA_MODE=centralized FHPA_COUNT="$fhpas" FHPA_MEMBERS="$members" FHPA_SYNC_PERIOD="$period" \
  FHPA_MEASURE_SECONDS=$measure FHPA_KEEP=0
run dead_member BENCH_REPEATS=$repeats BENCH_DURATION=$dead_duration

# fig KEY: a figure the scripts handed over (empty when none did).
fig() { awk -F= -v k="$1" '$1 == k { v = substr($0, length(k) + 2) } END { print v }' "$results"; }
# verdict VALUE OP LIMIT: PASS or FAIL (FAIL for a value that is not a number).
verdict() {
  awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN {
    if (v !~ /^[0-9]+(\.[0-9]+)?$/) { print "FAIL"; exit }
    ok = (op == "<") ? v + 0 < l + 0 : v + 0 <= l + 0
    print ok ? "PASS" : "FAIL" }'
}
measured=1
# row FIGURE VALUE UNIT OP LIMIT [NOTE]: one row of the table; a VALUE that
# was not handed over reads "not measured", and fails, as does one that is
# not a number.
row() {
  local figure=$1 value=$2 unit=$3 op=$4 limit=$5 note=${6:-} shown
  if [ -z "$value" ]; then
    shown="not measured" measured=0
  elif [[ $value =~ ^[0-9.]+$ ]]; then
    shown="$value${unit:+ $unit}${note:+ ($note)}"
  else
    shown=$value  # what the script said instead of a figure ("timeout")
  fi
  printf '| %s | %s | %s %s%s | %s |\n' "$figure" "$shown" "$op" "$limit" "${unit:+ $unit}" "$(verdict "$value" "$op" "$limit")"
}
# info FIGURE VALUE [UNIT]: a row without a target.
info() {
  if [ -n "$2" ]; then printf '| %s | %s | | |\n' "$1" "$2${3:+ $3}"; else printf '| %s | not measured | | |\n' "$1"; fi
}

size="${members}x$per_member"
pods=$((members * per_member))
gap=$(fig fhpa.gap_max_s)
gap_periods=""
[ -z "$gap" ] || gap_periods=$(awk -v g="$gap" -v p="$period" 'BEGIN { printf "%.2f", g / p }')
answer=$(awk -v b="$(fig "big.$size.answer_bytes")" 'BEGIN {
  if (b == "") print "an unmeasured"; else if (b >= 1048576) printf "a %.1f MiB", b / 1048576; else printf "a %.0f KiB", b / 1024 }')
sizes="--members $members --deployments $deployments --pods-per-member $per_member --fhpas $fhpas --sync-period $period"
commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)

echo "fedmetrics scale, $started, tree $commit, $(nproc) cores, load average $load_start at the start and $(cut -d' ' -f1 /proc/loadavg) at the end"
echo "$sizes$([ "$quick" = 1 ] && echo ", --quick (one run of each)" || echo ", medians of $repeats runs")"
[ "$sizes" = "$target_sizes" ] || echo "(not the targets' sizes, $target_sizes: the verdicts are informative)"
echo
echo "| figure | value | target | |"
echo "|---|---|---|---|"
row "simulator start, $members members x $deployments Deployments" "$(fig "sim.deployments.$deployments.start_ms")" ms '<' \
  $max_start_ms "$(fig "sim.deployments.$deployments.start_cpu_ms") ms of cpu"
row "simulator start, $members members x $per_member pods" "$(fig sim.pods.start_ms)" ms '<' $max_start_ms \
  "$(fig sim.pods.start_cpu_ms) ms of cpu"
row "simulator cpu, one member's pod list of $per_member pods" "$(fig sim.pods.pod_list_cpu_ms)" ms '<' $max_list_ms
row "simulator cpu, one member's pod-metrics list of $per_member pods" "$(fig sim.pods.metrics_list_cpu_ms)" ms '<' $max_list_ms
row "serve cpu per pods query over $members x $per_member pods ($pods pods, $answer answer)" \
  "$(fig "big.$size.cpu_ms")" ms '<=' $max_query_cpu_ms
row "serve peak resident growth during that query / the answer's size" "$(fig "big.$size.growth_ratio")" "" '<=' \
  $max_growth_ratio "$(fig "big.$size.growth_mib") MiB over $(fig "big.$size.idle_mib") MiB idle"
info "that query's wall time (the simulator's cpu per query beside it, on the same cores)" \
  "$(fig "big.$size.wall_ms")" "ms (simulator $(fig "big.$size.sim_cpu_ms") ms)"
row "loop, $fhpas FederatedHPAs over $members members every $period s: serve cpu, fraction of one core" \
  "$(fig fhpa.cpu)" "" '<=' $max_loop_cpu
row "loop: serve peak resident (VmHWM)" "$(fig fhpa.hwm_mib)" MiB '<=' $max_loop_mib
row "loop: longest interval between two syncs of one FederatedHPA, in periods" "$gap_periods" "" '<=' \
  $max_gap_periods "${gap:+$gap s}"
info "loop: member requests per sync" "$(fig fhpa.member_requests_per_sync)"
row "dead member (1 of 10 black-holed): merged p50 / healthy p50" "$(fig dead.ratio)" "" '<=' $max_dead_ratio \
  "$(fig dead.dead_p50_ms) / $(fig dead.healthy_p50_ms) ms"
info "dead member: the first five queries after it stopped answering (ms)" "$(fig dead.first_ms)"

# why NAME: the last thing NAME's script said that was not progress or a
# process's log line, and the crash of a process it started, if any.
why() {
  local last crash
  last=$(grep -v -e '^==> ' -e '^\[' -e 'logs kept in' "$tmp/$1.err" | tail -1 || true)
  crash=$(grep -oE 'Segmentation fault|Aborted|Bus error|Killed' "$tmp/$1.err" | head -1 || true)
  echo "${last:-no message}${crash:+ (a process it started: $crash)}"
}
if [ "${#failed[@]}" -gt 0 ] || [ "$measured" = 0 ]; then
  echo
  for name in "${failed[@]}"; do echo "not measured: bench/$name.sh: $(why "$name")"; done
  [ "${#failed[@]}" -gt 0 ] || echo "not measured: a figure its script did not hand over"
  echo "(the scripts' output is in $tmp)"
  exit 1
fi
log "done"

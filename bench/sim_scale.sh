#!/usr/bin/env bash
# The simulator's size targets (issue 3): a 3-member world starts in under a
# second, and a world of 100 members x 1,000 pods is held in under 200 MiB.
# Generates the worlds, starts `fedmetrics sim` on each, reads its start-up
# time from its log ("world ready in N ms") and its resident memory
# (VmRSS/VmHWM) once ready and after every member has been listed once, and
# prints the figures with PASS/FAIL. Medians of BENCH_REPEATS runs.
# Usage: bash bench/sim_scale.sh [BUILD_DIR]   (default build/; builds nothing)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:-build}
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
bin="$build_dir/fedmetrics"
repeats=${BENCH_REPEATS:-3}
[ -x "$bin" ] || { echo "sim_scale: $bin not found; build first (bash scripts/build.sh)" >&2; exit 1; }
work=$(mktemp -d /tmp/fedmetrics-simscale.XXXXXX)
pids=()
trap 'for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

# world MEMBERS PODS_PER_MEMBER FILE: workloads of at most 10,000 replicas
# (the world file's cap) divided evenly over every member.
world() {
  local members=$1 per=$2 file=$3
  local total=$((members * per)) workloads
  workloads=$(( (total + 9999) / 10000 ))
  {
    echo "members:"
    for i in $(seq 1 "$members"); do echo "  - {name: member$i, nodes: 10}"; done
    echo "workloads:"
    for w in $(seq 1 "$workloads"); do
      echo "  - name: web$w"
      echo "    namespace: default"
      echo "    replicas: $((total / workloads))"
      echo "    labels: {app: web$w}"
      echo "    containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]"
      echo "    propagation:"
      echo "      clusters: [$(seq -s, -f 'member%g' 1 "$members")]"
      echo "    load: {cpu: \"$members\"}"
    done
  } >"$file"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }

# run WORLD_FILE LIST_ALL(0|1) -> "startup_ms rss_kib hwm_kib"
run() {
  local file=$1 list_all=$2 dir="$work/out.$RANDOM"
  "$bin" sim --world "$file" --out-dir "$dir" >"$dir.log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  for _ in $(seq 1 600); do grep -q "world ready" "$dir.log" 2>/dev/null && break; sleep 0.1; done
  grep -q "world ready" "$dir.log" || { echo "sim_scale: the world did not start:" >&2; cat "$dir.log" >&2; exit 1; }
  if [ "$list_all" = 1 ]; then
    # Every member answers one pod list and one pod-metrics list, so that lazily built state counts.
    local token=fedmetrics-sim-token
    grep -o 'serving on https://127.0.0.1:[0-9]*' "$dir.log" | grep -v control | sed 's/serving on //' | while read -r url; do
      curl -sk -o /dev/null -H "Authorization: Bearer $token" "$url/api/v1/namespaces/default/pods"
      curl -sk -o /dev/null -H "Authorization: Bearer $token" "$url/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"
    done
  fi
  local ms rss hwm
  ms=$(grep -o 'world ready in [0-9]* ms' "$dir.log" | grep -o '[0-9]*' | head -1)
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "$ms $rss $hwm"
}

world 3 10 "$work/small.yaml"
world 100 1000 "$work/large.yaml"
small=(); large=()
for _ in $(seq 1 "$repeats"); do small+=("$(run "$work/small.yaml" 0)"); large+=("$(run "$work/large.yaml" 1)"); done
small_ms=$(printf '%s\n' "${small[@]}" | awk '{print $1}' | median)
large_ms=$(printf '%s\n' "${large[@]}" | awk '{print $1}' | median)
large_rss=$(printf '%s\n' "${large[@]}" | awk '{print $2}' | median)
large_hwm=$(printf '%s\n' "${large[@]}" | awk '{print $3}' | median)
verdict() { if [ "$1" -le "$2" ]; then echo PASS; else echo FAIL; fi; }
printf '%-52s %10s %s\n' "figure (median of $repeats)" value target
printf '%-52s %7s ms %s\n' "3 members x 10 pods: start to 'world ready'" "$small_ms" "< 1000 ms $(verdict "$small_ms" 999)"
printf '%-52s %7s ms\n' "100 members x 1,000 pods: start to 'world ready'" "$large_ms"
printf '%-52s %6s MiB %s\n' "100 members x 1,000 pods: resident after listing all" "$((large_rss / 1024))" "< 200 MiB $(verdict $((large_rss / 1024)) 199)"
printf '%-52s %6s MiB %s\n' "100 members x 1,000 pods: peak resident (VmHWM)" "$((large_hwm / 1024))" "< 200 MiB $(verdict $((large_hwm / 1024)) 199)"

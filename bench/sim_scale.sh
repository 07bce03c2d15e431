#!/usr/bin/env bash
# The simulator at its users' size: how long `fedmetrics sim` takes to start
# on worlds of 100 members and 1,000 / 3,000 / 10,000 Deployments, how much
# memory a world of 100 members x 1,000 pods holds, and how much cpu one
# member's pod list and pod-metrics list of 1,000 pods cost it.
#
# The worlds come from bench/gen-world.sh. For each, `fedmetrics sim` is
# started and its start-up time read from its log ("world ready in N ms");
# on the pods world its resident memory (VmRSS/VmHWM) is read after every
# member answered one pod list and one pod-metrics list, and its cpu
# (utime+stime from /proc/PID/stat) around SIM_LISTS lists of one member.
# Medians of BENCH_REPEATS runs. Prints the figures with PASS/FAIL.
#
# Usage: bash bench/sim_scale.sh [BUILD_DIR]   (default build/; builds nothing)
# Environment: BENCH_REPEATS (3), SIM_MEMBERS (100), SIM_DEPLOYMENTS
#   ("1000 3000 10000"), SIM_PODS_PER_MEMBER (1000; 0 skips the pods world),
#   SIM_LISTS (20), SIM_START_TIMEOUT (60, seconds: a world not ready by then
#   is reported as such), BENCH_RESULTS (a file: the figures are appended to
#   it as sim.KEY=VALUE lines, for bench/scale.sh).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
root=$bench_root
bench_build_dir "${1:-}"
bin=$fedmetrics
repeats=${BENCH_REPEATS:-3}
nmembers=${SIM_MEMBERS:-100}
read -r -a sizes <<<"${SIM_DEPLOYMENTS:-1000 3000 10000}"
per_member=${SIM_PODS_PER_MEMBER:-1000}
lists=${SIM_LISTS:-20}
start_timeout=${SIM_START_TIMEOUT:-60}
# The targets: start under 5 s at 10,000 Deployments; a 1,000-pod list in a few ms of cpu.
max_start_ms=5000
max_list_ms=10
max_resident_mib=200
need_fedmetrics sim_scale
for v in repeats nmembers per_member lists start_timeout; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "sim_scale: $v must be a number, not '${!v}'" >&2; exit 1; }
done
bench_init simscale 0
log "temp dir $tmp"
hz=$(getconf CLK_TCK)
token=fedmetrics-sim-token

# start WORLD_FILE: a `fedmetrics sim` on it; sets sim_pid, sim_log, ms (its
# start-up in ms, or "timeout") and cpu_ms (its cpu until then: on a busy
# machine the wall time says more about the others).
start() {
  local dir="$tmp/out.$RANDOM"
  sim_log="$dir.log"
  "$bin" sim --world "$1" --out-dir "$dir" >"$sim_log" 2>&1 &
  sim_pid=$!
  pids+=("$sim_pid")
  for _ in $(seq $((start_timeout * 10))); do
    grep -q "world ready" "$sim_log" 2>/dev/null && break
    kill -0 "$sim_pid" 2>/dev/null || { cat "$sim_log" >&2; fail "the simulator exited"; }
    sleep 0.1
  done
  ms=timeout
  cpu_ms=$(( $(ticks "$sim_pid") * 1000 / hz ))
  grep -q "world ready" "$sim_log" && ms=$(grep -o 'world ready in [0-9]* ms' "$sim_log" | grep -o '[0-9]*' | head -1)
  return 0
}
member_urls() { grep -o 'member [^ ]* serving on https://127.0.0.1:[0-9]*' "$sim_log" | sed 's/.* serving on //'; }

# The start-up time over the Deployment counts.
declare -A start_ms start_cpu
for n in "${sizes[@]}"; do
  bash "$root/bench/gen-world.sh" --members "$nmembers" --deployments "$n" --spread 2 --replicas 2 >"$tmp/d$n.yaml"
  runs=(); cpus=()
  for _ in $(seq "$repeats"); do
    start "$tmp/d$n.yaml"
    stop_pids "$sim_pid"
    runs+=("$ms"); cpus+=("$cpu_ms")
    log "$nmembers members x $n Deployments: $([ "$ms" = timeout ] && echo "not ready after $start_timeout s" || echo "$ms ms") ($cpu_ms ms of cpu)"
    [ "$ms" = timeout ] && break  # one run is enough to say so
  done
  start_cpu[$n]="$(median "${cpus[@]}") ms"
  value=timeout
  [ "${runs[-1]}" = timeout ] || value=$(median "${runs[@]}")
  if [ "$value" = timeout ]; then start_ms[$n]="not ready after ${start_timeout} s"; else start_ms[$n]="$value ms"; fi
  bench_result "sim.deployments.$n.start_ms=$value" "sim.deployments.$n.start_cpu_ms=$(median "${cpus[@]}")"
done

# The pods world: ten Deployments divided over every member.
if [ "$per_member" -gt 0 ]; then
  deployments=$(( (per_member * nmembers + 9999) / 10000 ))
  bash "$root/bench/gen-world.sh" --members "$nmembers" --nodes 10 --deployments "$deployments" --spread all \
    --pods-per-member "$per_member" >"$tmp/pods.yaml"
  pod_start=(); pod_start_cpu=(); rss=(); hwm=(); pod_cpu=(); metrics_cpu=()
  for _ in $(seq "$repeats"); do
    start "$tmp/pods.yaml"
    [ "$ms" != timeout ] || fail "the pods world was not ready after $start_timeout s"
    pod_start+=("$ms") pod_start_cpu+=("$cpu_ms")
    # Every member answers one pod list and one pod-metrics list, so that lazily built state counts.
    mapfile -t urls < <(member_urls)
    for url in "${urls[@]}"; do
      curl -sfk -o /dev/null -H "Authorization: Bearer $token" "$url/api/v1/namespaces/default/pods"
      curl -sfk -o /dev/null -H "Authorization: Bearer $token" "$url/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"
    done
    rss+=("$(kib "$sim_pid" VmRSS)")
    hwm+=("$(kib "$sim_pid" VmHWM)")
    # cpu per list of one member: the simulator's ticks around the requests (curl's own are not in them).
    for kind in pods metrics; do
      path=/api/v1/namespaces/default/pods
      [ "$kind" = metrics ] && path=/apis/metrics.k8s.io/v1beta1/namespaces/default/pods
      before=$(ticks "$sim_pid")
      for _ in $(seq "$lists"); do curl -sfk -o /dev/null -H "Authorization: Bearer $token" "${urls[0]}$path"; done
      after=$(ticks "$sim_pid")
      per=$(( (after - before) * 1000 * 1000 / hz / lists ))  # microseconds per list
      if [ "$kind" = pods ]; then pod_cpu+=("$per"); else metrics_cpu+=("$per"); fi
    done
    stop_pids "$sim_pid"
  done
fi

verdict() { if [ "$1" -le "$2" ]; then echo PASS; else echo FAIL; fi; }
printf '%-66s %16s %s\n' "figure (median of $repeats)" value target
for n in "${sizes[@]}"; do
  value=${start_ms[$n]}
  target="< $max_start_ms ms"
  if [ "$n" -ge 10000 ]; then
    case "$value" in *" ms") target="$target $(verdict "${value% ms}" $((max_start_ms - 1)))" ;; *) target="$target FAIL" ;; esac
  fi
  printf '%-66s %16s %s\n' "$nmembers members x $n Deployments: start to 'world ready'" "$value" "$target"
  printf '%-66s %16s\n' "$nmembers members x $n Deployments: simulator cpu until then" "${start_cpu[$n]}"
done
if [ "$per_member" -gt 0 ]; then
  ms=$(median "${pod_start[@]}")
  r=$(( $(median "${rss[@]}") / 1024 ))
  h=$(( $(median "${hwm[@]}") / 1024 ))
  p=$(median "${pod_cpu[@]}")
  m=$(median "${metrics_cpu[@]}")
  label="$nmembers members x $per_member pods"
  bench_result "sim.pods.start_ms=$ms" "sim.pods.start_cpu_ms=$(median "${pod_start_cpu[@]}")" \
    "sim.pods.rss_mib=$r" "sim.pods.hwm_mib=$h" \
    "sim.pods.pod_list_cpu_ms=$(awk -v u="$p" 'BEGIN {printf "%.1f", u / 1000}')" \
    "sim.pods.metrics_list_cpu_ms=$(awk -v u="$m" 'BEGIN {printf "%.1f", u / 1000}')"
  printf '%-66s %13s ms\n' "$label: start to 'world ready'" "$ms"
  printf '%-66s %12s MiB %s\n' "$label: resident after listing all" "$r" "< $max_resident_mib MiB $(verdict "$r" $((max_resident_mib - 1)))"
  printf '%-66s %12s MiB %s\n' "$label: peak resident (VmHWM)" "$h" "< $max_resident_mib MiB $(verdict "$h" $((max_resident_mib - 1)))"
  printf '%-66s %13s ms %s\n' "one member's pod list of $per_member pods: simulator cpu" "$(awk -v u="$p" 'BEGIN {printf "%.1f", u / 1000}')" \
    "< $max_list_ms ms $(verdict "$p" $((max_list_ms * 1000 - 1)))"
  printf '%-66s %13s ms %s\n' "one member's pod-metrics list of $per_member pods: simulator cpu" "$(awk -v u="$m" 'BEGIN {printf "%.1f", u / 1000}')" \
    "< $max_list_ms ms $(verdict "$m" $((max_list_ms * 1000 - 1)))"
fi

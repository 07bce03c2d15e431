#!/usr/bin/env bash
# What one big merged answer costs `fedmetrics serve`: the pods query over a
# world of M members x P pods each (100 x 1,000 is 100,000 pods, a 35 MB
# answer). For each size, bench/gen-world.sh writes the world, `fedmetrics
# sim` serves it, and, BENCH_REPEATS times, a fresh `fedmetrics serve
# --member-kubeconfig` answers BIG_QUERIES pods queries one after the other
# (curl, its output thrown away). Measured on serve:
#   - cpu per query: utime+stime from /proc/PID/stat around the queries;
#   - resident memory: VmRSS idle (up, every member discovered, no query yet),
#     VmHWM after the queries, and the peak growth (VmHWM - idle) against the
#     answer's size;
#   - wall time per query (curl's time_total; the simulator's cpu shares the
#     two cores, so it moves with the machine's load) and the simulator's cpu
#     per query beside it.
# Prints the medians over the repeats, with the issue's targets on the
# largest world (cpu <= 100 ms per query, peak growth <= 1.5 x the answer).
# Exit status 0 even when a target fails; 1 when something could not be
# measured (a process died, a query failed, a timeout).
#
# Usage: bash bench/big_answer.sh [BUILD_DIR]   (default build/; builds nothing)
# Environment: BIG_SIZES ("10x1000 100x1000": MEMBERSxPODS_PER_MEMBER),
#   BIG_QUERIES (10), BENCH_REPEATS (3), BIG_KEEP=1 (keep the temp dir),
#   BIG_SERVE_FLAGS (more `serve` flags; by default --member-timeout 30s: a
#   member that misses serve's deadline on a busy machine leaves its pods
#   out, and the query would measure a smaller answer),
#   BIG_PERF=1 (record `perf record -g` of serve during the last repeat's
#   queries of each size into the temp dir, and keep it), BENCH_RESULTS (a
#   file: the figures are appended to it as big.SIZE.KEY=VALUE lines, for
#   bench/scale.sh).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
root=$bench_root
bench_build_dir "${1:-}"
read -r -a sizes <<<"${BIG_SIZES:-10x1000 100x1000}"
queries=${BIG_QUERIES:-10}
repeats=${BENCH_REPEATS:-3}
keep=${BIG_KEEP:-0}
perf_on=${BIG_PERF:-0}
read -r -a serve_flags <<<"${BIG_SERVE_FLAGS:---member-timeout 30s}"
[ "$perf_on" = 1 ] && keep=1
# The targets (bench/README.md, "Big answers"), judged on the largest world only.
max_cpu_ms=100
max_growth_ratio=1.5
need_fedmetrics big_answer
for v in queries repeats; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "big_answer: $v must be a positive number, not '${!v}'" >&2; exit 1; }
done
for s in "${sizes[@]}"; do
  [[ $s =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "big_answer: a size is MEMBERSxPODS, not '$s'" >&2; exit 1; }
done
bench_init bigans "$keep"
log "temp dir $tmp"
hz=$(getconf CLK_TCK)
path=/apis/metrics.k8s.io/v1beta1/namespaces/default/pods
declare -A r_cpu r_sim r_wall r_idle r_hwm r_growth r_bytes
for size in "${sizes[@]}"; do
  members=${size%x*} per_member=${size#*x}
  # Ten Deployments at most 10,000 replicas each, spread over every member (as sim_scale.sh).
  deployments=$(((per_member * members + 9999) / 10000))
  bash "$root/bench/gen-world.sh" --members "$members" --nodes 10 --deployments "$deployments" --spread all \
    --pods-per-member "$per_member" >"$tmp/world-$size.yaml"
  start_world "w$size" "$tmp/world-$size.yaml"
  sim_pid=$world_pid
  cpus=() sims=() walls=() idles=() hwms=() growths=() bytes=""
  for r in $(seq "$repeats"); do
    start_serve_idle "serve-$size-$r" "w$size" "${serve_flags[@]}"
    idle=$(kib "$serve_pid" VmRSS)
    if [ "$perf_on" = 1 ] && [ "$r" = "$repeats" ]; then
      perf record -g -o "$tmp/perf-$size.data" -p "$serve_pid" >/dev/null 2>&1 &
      perf_pid=$!
      sleep 0.5
    fi
    before=$(ticks "$serve_pid") sim_before=$(ticks "$sim_pid")
    times=()
    for q in $(seq "$queries"); do
      out=$(curl -sk -o "$tmp/answer.json" -D "$tmp/answer.headers" --max-time 60 \
        -w '%{http_code} %{time_total} %{size_download}' "$serve_base$path") || fail "query $q failed (curl exit $?)"
      read -r code wall size_bytes <<<"$out"
      [ "$code" = 200 ] || { head -c 500 "$tmp/answer.json" >&2; fail "query $q answered $code"; }
      ! grep -qi '^warning:' "$tmp/answer.headers" || { cat "$tmp/answer.headers" >&2; fail "a member failed"; }
      times+=("$(awk -v s="$wall" 'BEGIN { printf "%.1f", s * 1000 }')")
      bytes=$size_bytes
    done
    after=$(ticks "$serve_pid") sim_after=$(ticks "$sim_pid")
    if [ "$perf_on" = 1 ] && [ "$r" = "$repeats" ]; then
      kill -INT "$perf_pid" 2>/dev/null || true
      wait "$perf_pid" 2>/dev/null || true
      log "perf data: $tmp/perf-$size.data (perf report -i ... --no-children)"
    fi
    alive "$serve_pid" "$tmp/serve-$size-$r.log" "serve"
    hwm=$(kib "$serve_pid" VmHWM)
    pods=$(grep -o '"name":' "$tmp/answer.json" | wc -l)  # pods and containers: a sanity check only
    [ "$pods" -ge $((members * per_member)) ] || fail "the answer holds fewer items than $((members * per_member)) pods"
    cpus+=("$(awk -v t=$((after - before)) -v hz="$hz" -v n="$queries" 'BEGIN { printf "%.1f", t * 1000 / hz / n }')")
    sims+=("$(awk -v t=$((sim_after - sim_before)) -v hz="$hz" -v n="$queries" 'BEGIN { printf "%.1f", t * 1000 / hz / n }')")
    walls+=("$(median "${times[@]}")")
    idles+=("$idle") hwms+=("$hwm") growths+=($((hwm - idle)))
    log "$size, run $r: serve cpu ${cpus[-1]} ms/query, idle $((idle / 1024)) MiB, peak $((hwm / 1024)) MiB, wall ${walls[-1]} ms, $bytes bytes"
    stop_pids "$serve_pid"
  done
  stop_pids "$sim_pid"
  r_cpu[$size]=$(median "${cpus[@]}") r_sim[$size]=$(median "${sims[@]}") r_wall[$size]=$(median "${walls[@]}")
  r_idle[$size]=$(median "${idles[@]}") r_hwm[$size]=$(median "${hwms[@]}") r_growth[$size]=$(median "${growths[@]}")
  r_bytes[$size]=$bytes
done

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
largest=${sizes[-1]}
printf '%-58s %14s %s\n' "figure (median of $repeats runs of $queries queries)" value target
for size in "${sizes[@]}"; do
  members=${size%x*} per_member=${size#*x}
  label="$members members x $per_member pods"
  answer_mib=$(awk -v b="${r_bytes[$size]}" 'BEGIN { printf "%.1f", b / 1048576 }')
  ratio=$(awk -v g="${r_growth[$size]}" -v b="${r_bytes[$size]}" 'BEGIN { printf "%.2f", g * 1024 / b }')
  cpu_target="" growth_target=""
  if [ "$size" = "$largest" ]; then
    cpu_target="<= $max_cpu_ms ms $(awk -v v="${r_cpu[$size]}" -v t="$max_cpu_ms" 'BEGIN { print (v <= t) ? "PASS" : "FAIL" }')"
    growth_target="<= $max_growth_ratio $(awk -v v="$ratio" -v t="$max_growth_ratio" 'BEGIN { print (v <= t) ? "PASS" : "FAIL" }')"
  fi
  printf '%-58s %11s MiB\n' "$label: answer size" "$answer_mib"
  printf '%-58s %12s ms %s\n' "$label: serve cpu per query" "${r_cpu[$size]}" "$cpu_target"
  printf '%-58s %11s MiB\n' "$label: serve resident, idle" "$(mib "${r_idle[$size]}")"
  printf '%-58s %11s MiB\n' "$label: serve peak resident (VmHWM)" "$(mib "${r_hwm[$size]}")"
  printf '%-58s %11s MiB\n' "$label: serve peak growth over idle" "$(mib "${r_growth[$size]}")"
  printf '%-58s %14s %s\n' "$label: peak growth / answer size" "$ratio" "$growth_target"
  printf '%-58s %12s ms\n' "$label: wall time per query" "${r_wall[$size]}"
  printf '%-58s %12s ms\n' "$label: simulator cpu per query" "${r_sim[$size]}"
  bench_result "big.$size.answer_bytes=${r_bytes[$size]}" "big.$size.cpu_ms=${r_cpu[$size]}" \
    "big.$size.idle_mib=$(mib "${r_idle[$size]}")" "big.$size.hwm_mib=$(mib "${r_hwm[$size]}")" \
    "big.$size.growth_mib=$(mib "${r_growth[$size]}")" "big.$size.growth_ratio=$ratio" \
    "big.$size.wall_ms=${r_wall[$size]}" "big.$size.sim_cpu_ms=${r_sim[$size]}"
done

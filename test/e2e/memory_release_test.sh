#!/usr/bin/env bash
# serve gives back the memory a burst freed (src/main/memory_release.hpp):
# 256 kept-alive clients wait on a black-holed member until the 1 s member
# deadline releases them all at once, several times; then, with the same
# clients still connected at a light rate, resident memory must fall well
# below its high-water mark (VmHWM). Without the periodic malloc_trim, glibc
# keeps the freed memory and VmRSS stays at the mark (the soak, bench/soak.sh,
# found it: +4.5 MB after 128 answers at once, never given back).
# Usage: memory_release_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2
# What is measured is glibc's malloc giving pages back. Under ASan the
# allocator is ASan's: malloc_trim does not reach it, and its quarantine keeps
# up to 256 MB of freed blocks on purpose, so VmRSS climbs for as long as the
# clients are answered (seen: 545 MB after the bursts, 793 MB 14 s later).
skip_if_sanitizer_build "$bin" "glibc's malloc_trim is measured here, and ASan replaces glibc's malloc"
command -v wrk >/dev/null || { echo "wrk not found (scripts/install-deps.sh installs it)"; exit 1; }

start_sim "$src/bench/worlds/ten.yaml"
start_serve "$E2E_TMP/serve.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" --member-timeout 1s
serve_pid=${E2E_PIDS[-1]}
query="$url/apis/metrics.k8s.io/v1beta1/namespaces/bench/pods"
check "the pods of namespace bench answer 200" test "$(curl -sk -o /dev/null -w '%{http_code}' "$query")" = 200
kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$serve_pid/status"; }

curl -sk -X PUT "$control/sim/v1/members/member10/faults" -d '{"blackhole":true}' >/dev/null
# 400 req/s on 256 connections: every connection waits on member10 at once.
# Asked as a Table: a JSON pods list is written from the members' pieces and
# leaves too little freed memory behind to measure; a Table is built from
# decoded pods, as every list was before.
spawn "$E2E_TMP/wrk.out" wrk -t1 -c256 -d30s --timeout 10s -H "Accept: application/json;as=Table;v=v1;g=meta.k8s.io" \
  -s "$src/bench/soak.lua" "$query" -- 400 1
sleep 4
curl -sk -X DELETE "$control/sim/v1/members/member10/faults" >/dev/null
sleep 2
burst_hwm=$(kib "$serve_pid" VmHWM)
# The clients stay connected at 400 req/s; the trim runs every 10 s.
sleep 14
rss=$(kib "$serve_pid" VmRSS)
hwm=$(kib "$serve_pid" VmHWM)
echo "VmHWM after the bursts $burst_hwm KiB; 14 s later VmRSS $rss KiB, VmHWM $hwm KiB"
check "the clients were still being answered (serve alive)" kill -0 "$serve_pid"
check "resident memory fell at least 2 MiB below its high-water mark with the clients connected" \
  test $((hwm - rss)) -ge 2048
finish

#!/usr/bin/env bash
# End to end, `fedmetrics serve` terminates as kube-apiserver does: on
# SIGTERM /readyz fails at once while requests are still served; after
# --shutdown-delay-duration the listener closes (a new connection is
# refused); the requests in flight, here waiting on a black-holed member,
# still get their answer (200 with the member's Warning); then the process
# exits 0, with nothing reported by the sanitizers in their build (the
# member client used to complete those requests after the server's
# io_contexts were gone). A second SIGTERM exits at once with status 1. A
# SIGTERM during start-up (still waiting for the control plane) ends it at once.
# Usage: graceful_termination_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/test/e2e/karmada.world.yaml"
sim_put() { curl -sk -X PUT "$control$1" -H 'Content-Type: application/json' -d "$2" >/dev/null; }
pods_path=/apis/metrics.k8s.io/v1beta1/namespaces/default/pods
ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$ca" "$url/readyz")" = 200 ]; }
# in_flight N: N pod-metrics requests in the background, each writing its status and headers to $E2E_TMP/inflight.N.
in_flight() {
  curl_pids=()
  for i in $(seq 1 "$1"); do
    spawn "$E2E_TMP/inflight.$i.status" curl -s -D "$E2E_TMP/inflight.$i.headers" -o /dev/null -w '%{http_code}' \
      --max-time 30 --cacert "$ca" "$url$pods_path"
    curl_pids+=("$spawned")
  done
}
wait_in_flight() { for pid in "${curl_pids[@]}"; do reap "$pid" || true; done; }
# exit_status_of PID SECONDS: waits for PID, at most SECONDS, and sets $status to its exit status ("running" if it did not end).
exit_status_of() {
  local deadline=$((SECONDS + $2))
  while kill -0 "$1" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
  if kill -0 "$1" 2>/dev/null; then status=running; return; fi
  status=0
  reap "$1" || status=$?
}
clean_log() { ! grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:|Segmentation|terminate called' "$1"; }

# --- graceful: readyz fails at once, the listener closes after the delay, in-flight requests finish ---
E2E_SHUTDOWN_DELAY=1500ms start_serve "$E2E_TMP/serve.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
  --member-timeout 3s
wait_until 20 ready || fail "serve did not become ready"
sim_put /sim/v1/members/member2/faults '{"blackhole":true}'
in_flight 4
sleep 0.5  # the requests are waiting on member2
kill -TERM "$serve_pid"
terminated_at=$(date +%s.%N)
readyz_status=$(curl -s -o "$E2E_TMP/readyz" -w '%{http_code}' --cacert "$ca" "$url/readyz?verbose")
check "right after SIGTERM /readyz answers 500 ($readyz_status)" test "$readyz_status" = 500
check "with the failing shutdown check" grep -q '^\[-\]shutdown failed: reason withheld$' "$E2E_TMP/readyz"
check "during the shutdown delay requests are still served (/healthz 200)" \
  test "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$ca" "$url/healthz")" = 200
refused() { ! curl -s -o /dev/null --max-time 2 --cacert "$ca" "$url/healthz"; }
wait_until 10 refused || fail "the listener was still open 10 s after SIGTERM"
refused_after=$(python3 -c "import time; print(round(time.time() - $terminated_at, 2))")
check "the listener closed after the 1.5 s delay, not before (closed after ${refused_after}s)" \
  python3 -c "import sys; sys.exit(0 if 1.3 <= $refused_after <= 6 else 1)"
exit_status_of "$serve_pid" 20
check "serve exited 0 after the requests in flight finished (status: $status)" test "$status" = 0
wait_in_flight
for i in 1 2 3 4; do
  check "request $i in flight at SIGTERM got its answer: $(cat "$E2E_TMP/inflight.$i.status")" \
    test "$(cat "$E2E_TMP/inflight.$i.status")" = 200
  check "request $i names the black-holed member in a Warning" grep -qi '^warning: 299 - "member2' "$E2E_TMP/inflight.$i.headers"
done
check "the log says the shutdown completed" grep -q 'shutdown complete' "$E2E_TMP/serve.log"
check "nothing reported by the sanitizers or the runtime" clean_log "$E2E_TMP/serve.log"
sim_put /sim/v1/members/member2/faults '{}'

# --- the Karmada member source and the autoscaler stop cleanly too ---
start_serve "$E2E_TMP/serve2.log" --karmada-kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --member-timeout 3s \
  --enable-autoscaler --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --horizontal-pod-autoscaler-sync-period 1s \
  --leader-elect-lease-duration 4s --leader-elect-renew-deadline 3s --leader-elect-retry-period 500ms
wait_until 20 ready || fail "serve (karmada source) did not become ready"
in_flight 4
kill -TERM "$serve_pid"
exit_status_of "$serve_pid" 20
check "serve with the Karmada source and the autoscaler exited 0 (status: $status)" test "$status" = 0
check "nothing reported by the sanitizers or the runtime (karmada source)" clean_log "$E2E_TMP/serve2.log"
wait_in_flight

# --- a SIGTERM while start-up still waits (here on a control plane that
# accepts connections and never answers the trust's ConfigMap read) ends it
# at once: start-up is awaited on the member clients' runtime while the main
# thread waits for the signal (it used to sit out the read's 10 s deadline,
# blocked, and then exit 1) ---
spawn "$E2E_TMP/silent.log" python3 -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True); time.sleep(120)'
silent_pid=$spawned
wait_until 5 test -s "$E2E_TMP/silent.log" || fail "the silent control plane did not start"
cat >"$E2E_TMP/silent.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: silent, cluster: {server: "https://127.0.0.1:$(head -1 "$E2E_TMP/silent.log")", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: silent, context: {cluster: silent, user: u}}]
current-context: silent
EOF
spawn "$E2E_TMP/serve4.log" "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs4" \
  --authentication-kubeconfig "$E2E_TMP/silent.kubeconfig" --authorization-kubeconfig "$E2E_TMP/silent.kubeconfig"
serve_pid=$spawned
wait_for_log "$E2E_TMP/serve4.log" "every metrics query answers 503" 10 || fail "serve (silent control plane) did not start"
kill -TERM "$serve_pid"
exit_status_of "$serve_pid" 3
check "a SIGTERM during start-up ends it at once, with status 0 (status: $status)" test "$status" = 0
never_served() { ! grep -q 'serving on' "$E2E_TMP/serve4.log"; }
check "and nothing was served" never_served
stop "$silent_pid"

# --- a second SIGTERM does not wait for the drain ---
E2E_SHUTDOWN_DELAY=20s start_serve "$E2E_TMP/serve3.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig"
wait_until 20 ready || fail "serve did not become ready (third)"
kill -TERM "$serve_pid"
sleep 0.3
kill -TERM "$serve_pid"
exit_status_of "$serve_pid" 3
check "a second SIGTERM exits at once with status 1 (status: $status)" test "$status" = 1
finish

# Shared by the end-to-end tests: a private temp dir cleaned on exit, process
# tracking, bounded waits, and checks that say what failed.
set -euo pipefail
E2E_TMP=$(mktemp -d /tmp/fedmetrics-e2e.XXXXXX)
E2E_PIDS=()
e2e_cleanup() {
  for pid in "${E2E_PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for pid in "${E2E_PIDS[@]:-}"; do
    [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
  done
  rm -rf "$E2E_TMP"
}
trap e2e_cleanup EXIT

E2E_FAILURES=0

# Exits 77 (CTest SKIP_RETURN_CODE, set for the test in test/CMakeLists.txt)
# when BIN was built with ASan/UBSan, saying why the test means nothing there.
skip_if_sanitizer_build() {  # skip_if_sanitizer_build BIN "why"
  if readelf -d "$1" | grep -q 'libasan\|libubsan'; then
    echo "skip: $(basename "$1") is a sanitizer build: $2"
    exit 77
  fi
}
pass() { echo "ok   - $*"; }
fail() { echo "FAIL - $*"; E2E_FAILURES=$((E2E_FAILURES + 1)); }
check() {  # check "description" command...
  local what=$1; shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
finish() {
  if [ "$E2E_FAILURES" -ne 0 ]; then
    echo "$E2E_FAILURES check(s) failed"
    # What the program said, before the temp dir goes (the test's own log files).
    for log in "$E2E_TMP"/*.log; do
      [ -f "$log" ] || continue
      echo "--- last lines of $(basename "$log"):"
      tail -n "${E2E_LOG_LINES:-40}" "$log"
    done
    exit 1
  fi
  echo "all checks passed"
}

# wait_for_log FILE PATTERN SECONDS: waits until PATTERN appears in FILE.
wait_for_log() {
  local file=$1 pattern=$2 deadline=$((SECONDS + $3))
  while [ $SECONDS -lt $deadline ]; do
    grep -q "$pattern" "$file" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "timed out waiting for '$pattern' in $file:"; cat "$file"
  return 1
}

# json_get JSON_TEXT PYTHON_EXPR: evaluates EXPR with `d` bound to the document.
json_get() { /usr/bin/python3 -c "import json,sys; d=json.loads(sys.argv[1]); print($2)" "$1"; }

# start_serve LOG [ARGS...]: starts `fedmetrics serve` on a free loopback port
# with its certificate in $E2E_TMP/certs, waits for it, and sets $url, $ca,
# $serve_pid and $E2E_TMP/kubeconfig (a kubeconfig for kubectl, token auth).
# SIGTERM ends it without the product's 2 s shutdown delay unless
# E2E_SHUTDOWN_DELAY says otherwise.
start_serve() {
  local log=$1; shift
  "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs" \
    --insecure-development-no-auth --shutdown-delay-duration "${E2E_SHUTDOWN_DELAY:-0s}" "$@" >"$log" 2>&1 &
  serve_pid=$!
  E2E_PIDS+=($serve_pid)
  wait_for_log "$log" "serving on https://127.0.0.1:" 10
  port=$(grep -o 'https://127.0.0.1:[0-9]*' "$log" | head -1 | sed 's/.*://')
  url="https://127.0.0.1:$port"
  ca="$E2E_TMP/certs/apiserver.crt"
  cat >"$E2E_TMP/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: fedmetrics
  cluster: {server: "$url", certificate-authority: "$ca"}
users:
- name: dev
  user: {token: development}
contexts:
- name: fedmetrics
  context: {cluster: fedmetrics, user: dev, namespace: ${E2E_NAMESPACE:-default}}
current-context: fedmetrics
KUBECONFIG
}
k() { kubectl --kubeconfig "$E2E_TMP/kubeconfig" --request-timeout=10s "$@"; }

# start_sim WORLD_FILE [SIM FLAGS...]: `fedmetrics sim` with its out-dir in
# $E2E_TMP/world and its log in $E2E_TMP/sim.log; waits for the world and
# sets $control (the simulator's control API) and $karmada (the simulated
# control plane's URL).
start_sim() {
  local world=$1; shift
  "$bin" sim --world "$world" --out-dir "$E2E_TMP/world" "$@" >"$E2E_TMP/sim.log" 2>&1 &
  E2E_PIDS+=($!)
  wait_for_log "$E2E_TMP/sim.log" "world ready" 10
  control=$(grep -o 'control serving on https://127.0.0.1:[0-9]*' "$E2E_TMP/sim.log" | head -1 | sed 's/control serving on //')
  karmada=$(grep -o 'karmada serving on https://127.0.0.1:[0-9]*' "$E2E_TMP/sim.log" | head -1 | sed 's/karmada serving on //')
}

# kk ARGS...: kubectl against the simulated Karmada control plane, as its admin.
kk() { kubectl --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --request-timeout=10s "$@"; }

# wait_until SECONDS COMMAND...: runs COMMAND every $WAIT_UNTIL_INTERVAL
# seconds (0.5: most commands here start kubectl) until it succeeds; fails
# when SECONDS have passed.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ $SECONDS -ge $deadline ] && return 1
    sleep "${WAIT_UNTIL_INTERVAL:-0.5}"
  done
}

# aggregated_world: the karmada e2e federation (test/e2e/karmada.world.yaml)
# with an `aggregation` section, so that the simulated control plane starts
# with the APIServices registered for a fedmetrics on 127.0.0.1:$port.
# Writes $E2E_TMP/world.yaml and fedmetrics' certificates to $E2E_TMP/certs
# (certs/generate.sh), and sets $port to a free port. Needs $src.
aggregated_world() {
  bash "$src/certs/generate.sh" "$E2E_TMP/certs" fedmetrics fedmetrics-system >/dev/null
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  sed -n '/^members:/,$p' "$src/test/e2e/karmada.world.yaml" >"$E2E_TMP/world.yaml"
  cat >>"$E2E_TMP/world.yaml" <<YAML
aggregation:
  address: 127.0.0.1
  port: $port
  caFile: certs/ca.crt
YAML
}

# start_aggregated_serve MEMBER_TIMEOUT: `fedmetrics serve` on $port with the
# certificates of aggregated_world, delegating to the world's control plane
# and asking its members (after start_sim), the one the APIServices point
# at; waits until it serves. Log: $E2E_TMP/serve.log.
start_aggregated_serve() {
  "$bin" serve --secure-port "$port" --bind-address 127.0.0.1 \
    --tls-cert-file "$E2E_TMP/certs/serving.crt" --tls-private-key-file "$E2E_TMP/certs/serving.key" \
    --authentication-kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --authorization-kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
    --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" --member-timeout "$1" >"$E2E_TMP/serve.log" 2>&1 &
  E2E_PIDS+=($!)
  wait_for_log "$E2E_TMP/serve.log" "serving on https://127.0.0.1:" 10
}

# km MEMBER ARGS...: kubectl through a simulated member's own context in
# members.kubeconfig (after start_sim).
km() { kubectl --kubeconfig "$E2E_TMP/world/members.kubeconfig" --context "$1" --request-timeout=10s "${@:2}"; }

# start_replica NAME [FLAGS...]: a `fedmetrics serve --enable-autoscaler`
# replica on the world of start_sim with leader election on short periods
# (Lease 3 s, renew deadline 2 s, retry 250 ms) and FLAGS, logging to
# $E2E_TMP/NAME.log; sets pid_NAME. identity_of NAME: its Lease identity.
start_replica() {
  local name=$1; shift
  "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs-$name" --insecure-development-no-auth \
    --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
    --enable-autoscaler --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
    --leader-elect-lease-duration 3s --leader-elect-renew-deadline 2s --leader-elect-retry-period 250ms "$@" \
    >"$E2E_TMP/$name.log" 2>&1 &
  E2E_PIDS+=($!)
  eval "pid_$name=$!"
  wait_for_log "$E2E_TMP/$name.log" "serving on https://127.0.0.1:" 10
}
# holder: the autoscaler Lease's holder identity; holder_is ID: it is ID (for wait_until).
holder() { kk get lease -n kube-system fedmetrics-autoscaler -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
holder_is() { test "$(holder)" = "$1"; }
identity_of() { grep -o 'leader election on Lease kube-system/fedmetrics-autoscaler as [^ ]*' "$E2E_TMP/$1.log" | awk '{print $NF}'; }

# sim_put PATH JSON: PUTs JSON to the simulator's control API (after
# start_sim), for example a workload's load; prints the HTTP status.
sim_put() { curl -sk -o /dev/null -w '%{http_code}' -X PUT "$control$1" -H 'Content-Type: application/json' -d "$2"; }

# member_pods MEMBER: how many app=nginx pods MEMBER runs, Terminating ones not counted.
member_pods() { km "$1" get pods -l app=nginx --no-headers 2>/dev/null | grep -vc Terminating || true; }

# member_pods_are MEMBER N: succeeds when member_pods MEMBER is N (for wait_until).
member_pods_are() { [ "$(member_pods "$1")" = "$2" ]; }

# member_hpa_yaml MIN MAX: an autoscaling/v2 HorizontalPodAutoscaler "nginx"
# of Deployment nginx, cpu at 50% of its request, for a member.
member_hpa_yaml() {
  cat <<YAML
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: nginx
  namespace: default
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  minReplicas: $1
  maxReplicas: $2
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
YAML
}

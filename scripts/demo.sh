#!/usr/bin/env bash
# README command 1: installs what is missing, builds, and runs fedmetrics on
# its embedded default: a simulated federation of three member clusters
# (examples/worlds/demo.yaml, served by `fedmetrics sim`) and `fedmetrics serve`
# aggregating them on https://127.0.0.1:8443. Ctrl-C stops both.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
port=${FEDMETRICS_DEMO_PORT:-8443}
world=${FEDMETRICS_DEMO_WORLD:-$root/examples/worlds/demo.yaml}

bash scripts/install-deps.sh
echo "==> building fedmetrics"
cmake -S . -B build >/dev/null
cmake --build build -j "$(nproc)" --target fedmetrics

demo=$root/build/demo
rm -rf "$demo/world"
mkdir -p "$demo"
"$root/build/fedmetrics" sim --world "$world" --out-dir "$demo/world" >"$demo/sim.log" 2>&1 &
sim_pid=$!
trap 'kill $sim_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q "world ready" "$demo/sim.log" 2>/dev/null && break; sleep 0.1; done
if ! grep -q "world ready" "$demo/sim.log"; then cat "$demo/sim.log"; echo "the simulated world did not start" >&2; exit 1; fi
control=$(grep -o 'control serving on https\?://127.0.0.1:[0-9]*' "$demo/sim.log" | head -1 | sed 's/control serving on //')

cat >"$demo/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: fedmetrics
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority: $demo/certs/apiserver.crt
users:
- name: developer
  user: {token: development}
contexts:
- name: fedmetrics
  context: {cluster: fedmetrics, user: developer, namespace: shop}
current-context: fedmetrics
KUBECONFIG

cat <<TRY

The simulated member clusters are up (log: $demo/sim.log):
$(grep 'serving on' "$demo/sim.log" | sed 's/^/  /')
fedmetrics is starting on https://127.0.0.1:$port and aggregates them. In another terminal, try:

  export KUBECONFIG=$demo/kubeconfig
  kubectl top pod                                   # pods of all three members, merged
  kubectl top pod -l fedmetrics/cluster=member1     # one member's pods
  kubectl get --raw /apis/metrics.k8s.io/v1beta1/namespaces/shop/pods | python3 -m json.tool
  kubectl get --raw '/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/http_requests' | python3 -m json.tool
  kubectl get --raw /apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_messages_ready
  kubectl get --raw /apis/custom.metrics.k8s.io/v1beta2   # what the members know, merged

  # break a member and watch the Warning headers:
  curl -sk -X PUT $control/sim/v1/members/member2/faults -d '{"errorRate":1}'
  curl -sk -X PUT $control/sim/v1/members/member2/faults -d '{}'
  # change the load on a workload:
  curl -sk -X PUT $control/sim/v1/namespaces/shop/workloads/web/load -d '{"cpu":"2"}'

  curl --cacert $demo/certs/apiserver.crt https://127.0.0.1:$port/metrics   # fedmetrics' own metrics
  build/fedmetrics simulate examples/scenarios/karmada-nginx-cpu.json       # the autoscaler, replayed

Press Ctrl-C to stop.
TRY
"$root/build/fedmetrics" serve --bind-address 127.0.0.1 --secure-port "$port" --cert-dir "$demo/certs" \
  --member-kubeconfig "$demo/world/members.kubeconfig" --insecure-development-no-auth

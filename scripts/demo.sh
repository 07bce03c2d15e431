#!/usr/bin/env bash
# README command 1: installs what is missing, builds, and runs fedmetrics on
# its embedded default: a simulated Karmada federation (examples/worlds/demo.yaml,
# `fedmetrics sim`: three member clusters and a control plane) and
# `fedmetrics serve` on https://127.0.0.1:8443, registered with the control
# plane's aggregation layer, authenticating and authorizing through it, with
# the autoscaling loop on. Ctrl-C stops both.
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

# The simulated control plane's kubeconfig, in namespace shop.
cp "$demo/world/karmada.kubeconfig" "$demo/kubeconfig"
kubectl --kubeconfig "$demo/kubeconfig" config set-context --current --namespace shop >/dev/null

# fedmetrics as it is installed: a delegating API server behind the control
# plane's aggregation layer, with the autoscaling loop on.
"$root/build/fedmetrics" serve --bind-address 127.0.0.1 --secure-port "$port" --cert-dir "$demo/certs" \
  --service-name fedmetrics --service-namespace fedmetrics-system \
  --authentication-kubeconfig "$demo/kubeconfig" --authorization-kubeconfig "$demo/kubeconfig" \
  --karmada-kubeconfig "$demo/kubeconfig" \
  --enable-autoscaler --kubeconfig "$demo/kubeconfig" >"$demo/serve.log" 2>&1 &
serve_pid=$!
trap 'kill $serve_pid $sim_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q "serving on" "$demo/serve.log" 2>/dev/null && break; sleep 0.1; done
if ! grep -q "serving on" "$demo/serve.log"; then cat "$demo/serve.log"; echo "fedmetrics serve did not start" >&2; exit 1; fi
k() { kubectl --kubeconfig "$demo/kubeconfig" --request-timeout=10s "$@"; }
k create namespace fedmetrics-system >/dev/null
sed -e "s/insecureSkipTLSVerify: true/caBundle: $(base64 -w0 "$demo/certs/apiserver.crt")/" -e "s/port: 443}/port: $port}/" \
  deploy/base/apiservice.yaml | k apply -f - >/dev/null
k patch service fedmetrics -n fedmetrics-system --type merge \
  -p '{"spec":{"type":"ExternalName","externalName":"127.0.0.1"}}' >/dev/null

cat <<TRY

The simulated Karmada federation is up (log: $demo/sim.log):
$(grep 'serving on' "$demo/sim.log" | sed 's/^/  /')
fedmetrics serves https://127.0.0.1:$port behind the control plane's aggregation layer
(deploy/base/apiservice.yaml applied; log: $demo/serve.log). In another terminal, try:

  export KUBECONFIG=$demo/kubeconfig                # the Karmada control plane, namespace shop
  kubectl get clusters.cluster.karmada.io           # the members
  kubectl top pod                                   # pods of all three members, merged, via the aggregation layer
  kubectl top pod -l fedmetrics/cluster=member1     # one member's pods
  kubectl get --raw /apis/metrics.k8s.io/v1beta1/namespaces/shop/pods | python3 -m json.tool
  kubectl get --raw '/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/http_requests' | python3 -m json.tool
  kubectl get --raw /apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_messages_ready
  kubectl get --raw /apis/custom.metrics.k8s.io/v1beta2   # what the members know, merged

  # break a member and watch the Warning headers (relayed by the control plane):
  curl -sk -X PUT $control/sim/v1/members/member2/faults -d '{"errorRate":1}'
  curl -sk -X DELETE $control/sim/v1/members/member2/faults

  # autoscale: a FederatedHPA on web (cpu 50 %), then load
  kubectl apply -f - <<'YAML'
  apiVersion: autoscaling.karmada.io/v1alpha1
  kind: FederatedHPA
  metadata: {name: web, namespace: shop}
  spec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    minReplicas: 1
    maxReplicas: 12
    metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
  YAML
  curl -sk -X PUT $control/sim/v1/namespaces/shop/workloads/web/load -d '{"cpu":"2"}'
  kubectl get fhpa web -w                           # every 15 s; kubectl get events shows SuccessfulRescale

  curl --cacert $demo/certs/apiserver.crt -H "Authorization: Bearer fedmetrics-sim-token" \\
    https://127.0.0.1:$port/metrics                 # fedmetrics' own metrics
  build/fedmetrics simulate examples/scenarios/karmada-nginx-cpu.json       # the autoscaler, replayed

Press Ctrl-C to stop.
TRY
wait $serve_pid

#!/usr/bin/env bash
# The live loop on Karmada's second walkthrough, "custom metrics on
# sample-app" (examples/worlds/sample-app.yaml, examples/federatedhpa/
# sample-app.yaml): a Pods metric, http_requests at 700m per pod, read per
# member from the members' custom.metrics.k8s.io through the in-process
# aggregator.
# Usage: autoscaler_custom_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/examples/worlds/sample-app.yaml"
# The default sync period (15 s): the walkthrough's timing as an operator sees it.
sync_period=15
start_serve "$E2E_TMP/serve.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
  --enable-autoscaler --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
  --horizontal-pod-autoscaler-sync-period ${sync_period}s

replicas_are() { test "$(kk get deployment sample-app -o jsonpath='{.spec.replicas}')" = "$1"; }
metric_seen() { kk get fhpa sample-app -o jsonpath='{.status.currentMetrics[0].pods.metric.name}' | grep -q http_requests; }

# Created once this replica leads and its first pass has listed (nothing): the
# object then reaches the loop by the watch alone.
wait_for_log "$E2E_TMP/serve.log" "acquired the lease" 10 >/dev/null
sleep 1
check "kubectl apply the walkthrough's FederatedHPA" kk apply -f "$src/examples/federatedhpa/sample-app.yaml"
# The watch brings the new object: its first sync comes at once, not at the next 15 s tick.
check "the watch's ADDED event syncs it at once (logged as such)" \
  wait_for_log "$E2E_TMP/serve.log" "autoscaler: default/sample-app: new FederatedHPA, synced at once" 10
check "the status reports the pods metric http_requests within a sync period" wait_until $((sync_period + 5)) metric_seen
# 2.8 requests per second over the pods: at 700m per pod that is 4 pods.
load() { curl -sk -X PUT "$control/sim/v1/namespaces/default/workloads/sample-app/load" -d "{\"requestsPerSecond\":\"$1\"}" >/dev/null; }
load 2.8
load_arrived=$SECONDS
# The 10 s scale-up window first forgets the idle recommendation; 1 -> 4 is
# within the default scale-up limit (4 pods per 15 s), so one step.
check "2.8 req/s at a 700m target scales sample-app to 4 within three sync periods" \
  wait_until $((3 * sync_period + 4)) replicas_are 4
echo "# reached 4 replicas $((SECONDS - load_arrived)) s after the load arrived (sync period ${sync_period} s)" >&2
check "and stays there through the next sync (the usage ratio is within tolerance)" bash -c "sleep $((sync_period + 2)); test \"\$(kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' get deployment sample-app -o jsonpath='{.spec.replicas}')\" = 4"
check "a SuccessfulRescale Event names the pods metric" \
  grep -q 'pods metric http_requests above target' <<<"$(kk get events -n default -o jsonpath='{.items[*].message}')"
load 0
check "without requests it scales back to 1 once the 10 s stabilization has passed" \
  wait_until $((2 * sync_period + 5)) replicas_are 1
finish

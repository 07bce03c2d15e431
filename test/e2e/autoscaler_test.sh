#!/usr/bin/env bash
# The live autoscaling loop on Karmada's "cpu utilization on nginx"
# walkthrough (examples/worlds/nginx.yaml): `fedmetrics serve
# --enable-autoscaler` watches the FederatedHPA created with kubectl on the
# simulated control plane, reads cpu from the members through the in-process
# aggregator, scales the Deployment's scale subresource (which the simulator
# divides over member1 and member2), writes the status subresource and
# records Events; when the load goes, it scales back down after the
# stabilization window. `kubectl fedmetrics explain fhpa`, the real plugin
# through the real kubectl, prints the decisions the loop keeps on the
# object: one bound by maxReplicas, one held by the scale-down window.
# Usage: autoscaler_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/examples/worlds/nginx.yaml"
members() { kubectl --kubeconfig "$E2E_TMP/world/members.kubeconfig" --request-timeout=10s "$@"; }
load() { curl -sk -X PUT "$control/sim/v1/namespaces/default/workloads/nginx/load" -d "{\"cpu\":\"$1\"}" >/dev/null; }

# The default sync period (15 s), so that "within three sync periods" means
# what it says. The simulated pods are ready at once, so the cpu
# initialization period and readiness delay (5 min and 30 s upstream, there
# for slow-starting real pods) are shortened: otherwise the new replicas'
# usage is not trusted for five minutes and the walkthrough stalls at 5.
sync_period=15
start_serve "$E2E_TMP/serve.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
  --enable-autoscaler --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
  --horizontal-pod-autoscaler-sync-period ${sync_period}s --horizontal-pod-autoscaler-cpu-initialization-period 1s \
  --horizontal-pod-autoscaler-initial-readiness-delay 1s

# The plugin as installed (kubectl_plugin_test.sh): a link on PATH.
mkdir -p "$E2E_TMP/plugins"
ln -s "$(readlink -f "$bin")" "$E2E_TMP/plugins/kubectl-fedmetrics"
explain() { PATH="$E2E_TMP/plugins:$PATH" kubectl fedmetrics --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --request-timeout 10s explain fhpa "$@"; }
explained() { explain nginx >"$E2E_TMP/explain.txt" 2>&1 && grep -qE "$1" "$E2E_TMP/explain.txt"; }

replicas() { kk get deployment nginx -o jsonpath='{.spec.replicas}'; }
replicas_above() { test "$(replicas)" -gt "$1"; }
replicas_are() { test "$(replicas)" = "$1"; }

cp "$src/examples/federatedhpa/nginx.yaml" "$E2E_TMP/fhpa.yaml"
check "kubectl apply the walkthrough's FederatedHPA" kk apply -f "$E2E_TMP/fhpa.yaml"
status_current_is() { test "$(kk get fhpa nginx -o jsonpath='{.status.currentReplicas}')" = "$1"; }
check "idle: the status is written within a sync period" wait_until $((sync_period + 5)) status_current_is 1
check "and the Deployment stays at 1" replicas_are 1
# The first sync comes at once with the watch: within the first second of a
# pod's start its cpu is not trusted yet (upstream's initialization rule), so
# that sync may say FailedGetResourceMetric; the next tick has the metric.
valid_metric() { grep -q 'ValidMetricFound' <<<"$(kk get fhpa nginx -o jsonpath='{.status.conditions}')"; }
check "ScalingActive is True with ValidMetricFound within a sync period" wait_until $((sync_period + 5)) valid_metric

load 300m
load_arrived=$SECONDS
# Three periods: the 10 s scale-up stabilization window must first forget the
# idle recommendations, then the default scale-up limit (4 pods or 100 % per
# 15 s) allows 1 -> 5, and one period later 5 -> 10.
check "under load the loop scales the Deployment up" wait_until $((2 * sync_period + 5)) replicas_above 1
check "a SuccessfulRescale Event names the new size" \
  wait_until 5 bash -c "kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' get events -n default -o jsonpath='{.items[*].message}' | grep -q 'New size: [0-9]*; reason: cpu resource utilization (percentage of request) above target'"
# (+4 s: the sync's own time after the third tick, and bash's whole-second clock.)
check "it reaches maxReplicas 10 within three sync periods of the load arriving" \
  wait_until $((3 * sync_period + 4 - (SECONDS - load_arrived))) replicas_are 10
echo "# reached 10 replicas $((SECONDS - load_arrived)) s after the load arrived (sync period ${sync_period} s)" >&2
pods() { echo $(( $(members --context member1 get pods -l app=nginx --no-headers | wc -l) + $(members --context member2 get pods -l app=nginx --no-headers | wc -l) )); }
pods_are() { test "$(pods)" = "$1"; }
check "the members run the new replicas (5 + 5)" wait_until 10 pods_are 10
check "member3, outside the propagation, runs none" test "$(members --context member3 get pods -l app=nginx --no-headers 2>/dev/null | wc -l)" = 0
# The loop reads where Karmada put the target from its ResourceBinding and asks only those members.
check "the ResourceBinding nginx-deployment places 5 + 5 on member1 and member2" \
  test "$(kk get resourcebinding nginx-deployment -o jsonpath='{range .spec.clusters[*]}{.name}={.replicas} {end}')" = "member1=5 member2=5 "
status=$(kk get fhpa nginx -o json)
check "status: desiredReplicas 10, currentMetrics with the utilization, lastScaleTime" \
  test "$(json_get "$status" "(d['status']['desiredReplicas'], d['status']['currentMetrics'][0]['resource']['name'], 'lastScaleTime' in d['status'])")" = "(10, 'cpu', True)"
check "ScalingLimited: TooManyReplicas at maxReplicas" \
  grep -q 'TooManyReplicas' <<<"$(json_get "$status" "d['status']['conditions']")"
check "explain: the decision is bound by maxReplicas" wait_until 20 explained '^Bound by: +TooManyReplicas: maxReplicas 10 \(the recommendation was [0-9]+\)$'
check "explain: the metric against its target" grep -qE '^cpu resource utilization \(percentage of request\) +[0-9]+% \([0-9]+m\) +10% ' "$E2E_TMP/explain.txt"
# (The decision that took it to 10: the replicas then, placed over the two members.)
check "explain: in each member the pods placed were listed and counted" \
  bash -c "grep -qE '^member1 +([1-9][0-9]*) +\1 +\1 +0 +0 +0 +[0-9.]+%' '$E2E_TMP/explain.txt' && grep -qE '^member2 +([1-9][0-9]*) +\1 +\1 +0 +0 +0 +[0-9.]+%' '$E2E_TMP/explain.txt'"
cat "$E2E_TMP/explain.txt" >&2
# A short period of its own from now on, so that two syncs fall within the
# 10 s scale-down window: the second step down waits for it.
kk annotate fhpa nginx autoscaling.fedmetrics.io/sync-period=3s >/dev/null

load 0
check "explain: a scale-down held by the 10 s stabilization window" wait_until $((sync_period + 20)) explained \
  '^Bound by: +ScaleDownStabilized: the highest recommendation of the last 10 s scale-down stabilization window is [0-9]+ \(this sync proposed [0-9]+\)$'
cat "$E2E_TMP/explain.txt" >&2
# The idle pods still use ~4 % of their request (target 10 %), so each sync
# multiplies the count by ~0.4: 10 -> 4 -> 2 -> 1, one step per window.
check "without load it scales back down to 1 (10 s stabilization, then a step per period)" \
  wait_until $((4 * sync_period + 5)) replicas_are 1

# A FederatedHPA whose target does not exist: FailedGetScale, in an Event and the status.
sed -e 's/name: nginx$/name: ghost/' -e 's/kind: Deployment, name: nginx/kind: Deployment, name: ghost/' "$E2E_TMP/fhpa.yaml" >"$E2E_TMP/ghost.yaml"
kk apply -f "$E2E_TMP/ghost.yaml" >/dev/null
check "a missing target gives AbleToScale False / FailedGetScale" \
  wait_until $((sync_period + 5)) bash -c "kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' get fhpa ghost -o jsonpath='{.status.conditions}' | grep -q FailedGetScale"
check "and a FailedGetScale Warning Event" \
  grep -q 'FailedGetScale' <<<"$(kk get events -n default -o jsonpath='{.items[*].reason}')"
set +e
explain ghost >"$E2E_TMP/ghost-explain.txt" 2>&1
rc=$?
explain nothere >"$E2E_TMP/nothere-explain.txt" 2>&1
rc_nothere=$?
set -e
check "explain: a FederatedHPA no decision was made for says so, exit 1" \
  bash -c "[ $rc = 1 ] && grep -q 'error: federatedhpa default/ghost has no decision yet' '$E2E_TMP/ghost-explain.txt'"
check "explain: one that does not exist is kubectl's NotFound, exit 1" \
  bash -c "[ $rc_nothere = 1 ] && grep -q 'Error from server (NotFound): ' '$E2E_TMP/nothere-explain.txt'"

# Each FederatedHPA on its own cadence: ghost3s, with a period of its own
# (autoscaling.fedmetrics.io/sync-period: 3s), is synced at creation and then
# every 3 s, as the count of its one FailedGetScale Event shows; a period
# under 3 s is refused.
with_period() {  # with_period NAME PERIOD
  sed -e "s/name: ghost\$/name: $1/" -e "s/^metadata:\$/metadata:\n  annotations: {autoscaling.fedmetrics.io\/sync-period: $2}/" \
    "$E2E_TMP/ghost.yaml" >"$E2E_TMP/$1.yaml"
  kk apply -f "$E2E_TMP/$1.yaml" >/dev/null
}
syncs_of() { kk get events -n default -o jsonpath="{range .items[?(@.involvedObject.name==\"$1\")]}{.count}{end}"; }
syncs_reach() { test "$(syncs_of "$1")" -ge "$2" 2>/dev/null; }
with_period ghost3s 3s
check "a FederatedHPA is synced when it is created" wait_until 5 syncs_reach ghost3s 1
first=$SECONDS
check "and then every 3 s, its own period" wait_until 12 syncs_reach ghost3s 3
took=$((SECONDS - first))
echo "# ghost3s: 2 more syncs in ${took} s" >&2
check "never twice within its period (two periods, 6 s, took ${took} s)" test "$took" -ge 4
with_period ghost1s 1s
invalid_period() { grep -q 'InvalidSyncPeriod' <<<"$(kk get fhpa ghost1s -o jsonpath='{.status.conditions}')"; }
check "a period under 3 s: ScalingActive False / InvalidSyncPeriod" wait_until 5 invalid_period
finish

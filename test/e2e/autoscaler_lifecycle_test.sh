#!/usr/bin/env bash
# The live loop against the simulated control plane across syncs and a
# restart: a FederatedHPA deleted and created again under its name is a new
# object (synced at once, no history); a spec the API server would refuse
# and two FederatedHPAs on one Deployment are never acted on, and the
# status says why; a FederatedHPA that fails the same way at every sync has
# one Event whose count goes up (client-go's correlation: the Event is
# patched, not written again), and a restarted `fedmetrics serve` starts
# from the status on the object, so a condition that did not change keeps
# its lastTransitionTime.
# Usage: autoscaler_lifecycle_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

# The walkthrough's world with an External metric, for scale to zero.
{ cat "$src/examples/worlds/nginx.yaml"
  printf '%s\n' 'externalMetrics:' '  - {name: queue_depth, labels: {queue: jobs}, value: "0", members: [member1]}'
} >"$E2E_TMP/nginx-queue.yaml"
start_sim "$E2E_TMP/nginx-queue.yaml"
WAIT_UNTIL_INTERVAL=0.2
serve_loop() {  # LOG
  start_serve "$1" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
    --enable-autoscaler --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --horizontal-pod-autoscaler-sync-period 1s
  serve_pid=${E2E_PIDS[-1]}
}

# fhpa NAME MIN MAX [BEHAVIOR [RESOURCE PERCENT]]: a FederatedHPA of
# Deployment nginx, by default cpu at 10 % of its request.
fhpa() {
  cat <<YAML
apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: $1, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  minReplicas: $2
  maxReplicas: $3
  behavior: {${4:-}}
  metrics:
  - type: Resource
    resource: {name: ${5:-cpu}, target: {type: Utilization, averageUtilization: ${6:-10}}}
YAML
}
replicas() { kk get deploy nginx -o jsonpath='{.spec.replicas}'; }
replicas_are() { test "$(replicas)" = "$1"; }
generation() { kk get deploy nginx -o jsonpath='{.metadata.generation}'; }
# active_of NAME: "status reason message" of its ScalingActive condition.
active_of() { kk get fhpa "$1" -o jsonpath='{range .status.conditions[?(@.type=="ScalingActive")]}{.status} {.reason} {.message}{end}' 2>/dev/null; }
active_is() { test "$(active_of "$1")" = "$2"; }
# event_counts NAME REASON: the count of each Event REASON about FederatedHPA NAME, one a line.
event_counts() {
  kk get events -n default -o jsonpath="{range .items[?(@.reason==\"$2\")]}{.involvedObject.name} {.count}{\"\\n\"}{end}" |
    awk -v n="$1" '$1 == n {print $2}'
}
event_count_at_least() { test "$(event_counts "$1" "$2" | sort -n | tail -1)" -ge "$3" 2>/dev/null; }

# Deleted and created again within one period (30 s here): a new object,
# synced at once, with no history. The scale-up policy allows one pod per
# 10 minutes: the first object scales 1 -> 2 (below its minimum); the
# second, wanting more (8Mi of memory a pod is 12 % of the request, the
# target 1 %), may add one pod (2 -> 3), where the first one's scale event
# would have held it at 2. (Memory, not cpu: a fresh pod's cpu is not
# counted during its initialization period.)
one_pod=' scaleUp: {policies: [{type: Pods, value: 1, periodSeconds: 600}]} '
fhpa nginx 2 10 "$one_pod" memory 1 >"$E2E_TMP/nginx.yaml"
start_serve "$E2E_TMP/serve-period.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
  --enable-autoscaler --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --horizontal-pod-autoscaler-sync-period 30s
kk apply -f "$E2E_TMP/nginx.yaml" >/dev/null
check "a new FederatedHPA is synced at once: 1 -> 2, its minimum" wait_until 10 replicas_are 2
first_uid=$(kk get fhpa nginx -o jsonpath='{.metadata.uid}')
kk replace --force -f "$E2E_TMP/nginx.yaml" >/dev/null
check "created again under its name: another object ($first_uid, now $(kk get fhpa nginx -o jsonpath='{.metadata.uid}'))" \
  test "$(kk get fhpa nginx -o jsonpath='{.metadata.uid}')" != "$first_uid"
check "and synced at once with no history: 2 -> 3 (one pod per period, none spent)" wait_until 10 replicas_are 3
stop "$serve_pid"

# minReplicas above maxReplicas: never acted on (it would scale 3 -> 7),
# ScalingActive False naming the field, and one Event whose count grows.
fhpa nginx 7 3 | kk apply -f - >/dev/null
generation_before=$(generation)
serve_loop "$E2E_TMP/serve.log"
invalid='False FailedConvertHPA spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`'
check "min 7 / max 3: ScalingActive is False and names the field" wait_until 10 active_is nginx "$invalid"
check "its Warning is one Event counted at every sync (count reaches 3)" wait_until 10 event_count_at_least nginx FailedConvertHPA 3
check "and not one Event per sync" test "$(event_counts nginx FailedConvertHPA | wc -l)" = 1
check "the scale was never written (3 replicas, generation $generation_before)" \
  test "$(replicas) $(generation)" = "3 $generation_before"

# A second FederatedHPA of the same Deployment: AmbiguousSelector on both
# (the invalid one still claims its target), neither scales it, though each
# alone would (3 is below their minimum of 4).
fhpa nginx-2 4 10 | kk apply -f - >/dev/null
fhpa nginx 4 10 | kk apply -f - >/dev/null
ambiguous='False AmbiguousSelector pods by selector app=nginx are controlled by multiple HPAs: [default/nginx default/nginx-2]'
check "two FederatedHPAs on nginx: AmbiguousSelector on nginx-2" wait_until 10 active_is nginx-2 "$ambiguous"
check "and on nginx" wait_until 10 active_is nginx "$ambiguous"
check "both keep refusing at every sync" wait_until 10 event_count_at_least nginx AmbiguousSelector 2
check "neither scaled it (3 replicas, generation $generation_before)" \
  test "$(replicas) $(generation)" = "3 $generation_before"
kk delete fhpa nginx-2 >/dev/null
check "the other one deleted: nginx scales it again (3 -> 4)" wait_until 10 replicas_are 4
kk delete fhpa nginx >/dev/null

# A FederatedHPA whose target does not exist: FailedGetScale at every sync.
sed -e 's/name: nginx$/name: ghost/' -e 's/kind: Deployment, name: nginx/kind: Deployment, name: ghost/' \
  "$src/examples/federatedhpa/nginx.yaml" >"$E2E_TMP/ghost.yaml"
kk apply -f "$E2E_TMP/ghost.yaml" >/dev/null
failed_events() {  # "NAME COUNT" of each FailedGetScale Event about ghost
  kk get events -n default -o jsonpath='{range .items[?(@.reason=="FailedGetScale")]}{.metadata.name} {.count}{"\n"}{end}'
}
count_at_least() { test "$(failed_events | awk '{print $2}' | sort -n | tail -1)" -ge "$1" 2>/dev/null; }
check "the repeated FailedGetScale is counted on its Event (count reaches 3)" wait_until 15 count_at_least 3
check "and it is one Event, not one per sync" test "$(failed_events | wc -l)" = 1

able_since() { kk get fhpa ghost -o jsonpath='{.status.conditions[?(@.type=="AbleToScale")].lastTransitionTime}'; }
before=$(able_since)
check "the status says since when it is unable to scale ($before)" test -n "$before"
stop "$serve_pid"
sleep 1.1  # status times have a one-second resolution: a fresh transition would show
serve_loop "$E2E_TMP/serve-again.log"
# Its second sync has begun once the first one, status write included, has
# ended: the status compared below is the restarted loop's, not the old one.
synced_twice() { test "$(grep -c 'default/ghost: FailedGetScale' "$E2E_TMP/serve-again.log")" -ge 2; }
check "the restarted loop syncs ghost again (twice)" wait_until 10 synced_twice
check "and keeps AbleToScale's lastTransitionTime from the object ($(able_since))" test "$(able_since)" = "$before"
stop "$serve_pid"

# A member that accepts connections and never answers: after three
# unanswered requests it is left out, and the loop reads it as a member whose
# pods are missing, never absent, so its absence scales nothing down
# (nginx's 4 replicas, 2 in each member, at 12 % of their memory request
# against a 50 % target would go down to 1); once it answers again it is
# read again, and the loop scales down.
member2_faults() { curl -sfk -X "$1" "$control/sim/v1/members/member2/faults" -H 'Content-Type: application/json' ${2:+-d "$2"} >/dev/null; }
member2_faults PUT '{"blackhole":true}'
start_serve "$E2E_TMP/serve-dead.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
  --enable-autoscaler --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --horizontal-pod-autoscaler-sync-period 1s \
  --member-timeout 1s --horizontal-pod-autoscaler-downscale-stabilization 0s
serve_pid=${E2E_PIDS[-1]}
fhpa quiet 1 10 '' memory 50 | kk apply -f - >/dev/null
missing_left_out() { grep -c 'default/quiet: pods missing this sync (counted as missing pods): member2: left out: not answering since' "$E2E_TMP/serve-dead.log"; }
left_out_syncs() { test "$(missing_left_out)" -ge "$1"; }
check "member2 black-holed: left out after three timeouts, and the loop reads its pods as missing" wait_until 20 left_out_syncs 1
check "two syncs later, still left out" wait_until 10 left_out_syncs 3
check "and nginx still has its 4 replicas: no scale-down on member2's absence" replicas_are 4
# `kubectl fedmetrics explain` (the plugin through kubectl) shows why: member2's 2 replicas are missing pods.
mkdir -p "$E2E_TMP/plugins"
ln -sf "$(readlink -f "$bin")" "$E2E_TMP/plugins/kubectl-fedmetrics"
PATH="$E2E_TMP/plugins:$PATH" kubectl fedmetrics --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" explain fhpa quiet >"$E2E_TMP/quiet.txt"
cat "$E2E_TMP/quiet.txt" >&2
check "explain: member2 unread, its 2 placed replicas counted as missing pods" \
  grep -q '^Unread: *member2: its pods could not be read; its 2 placed replicas count as missing pods$' "$E2E_TMP/quiet.txt"
check "explain: member2's row has 2 missing pods, member1's 2 counted" \
  bash -c "grep -qE '^member2 +2 +2 +0 +2 +0 +0 ' '$E2E_TMP/quiet.txt' && grep -qE '^member1 +2 +2 +2 +0 +0 +0 ' '$E2E_TMP/quiet.txt'"
member2_faults DELETE
check "member2 answering again: read again, nginx scales down to 1" wait_until 20 replicas_are 1
check "the log says member2 answers again" grep -q 'member member2: answers again; asked again' "$E2E_TMP/serve-dead.log"
kk delete fhpa quiet >/dev/null

# Scale to zero (minReplicas 0, an External queue at 10 per replica): the
# empty queue takes nginx to 0 and ScaledToZero=True marks that zero as the
# loop's own; 20 queued wake it (2 replicas, ScaledToZero=False); a zero
# made with kubectl is left alone (ScalingDisabled), whatever the queue.
queue() { curl -sfk -X PUT "$control/sim/v1/externalmetrics/queue_depth" -d "{\"value\":\"$1\"}" >/dev/null; }
zero_of() { kk get fhpa queue -o jsonpath='{range .status.conditions[?(@.type=="ScaledToZero")]}{.status} {.reason}{end}'; }
zero_is() { test "$(zero_of)" = "$1"; }
queue_fhpa='{"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA", "metadata": {"name": "queue", "namespace": "default"},
  "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}, "minReplicas": 0, "maxReplicas": 4,
    "metrics": [{"type": "External", "external": {"metric": {"name": "queue_depth", "selector": {"matchLabels": {"queue": "jobs"}}},
      "target": {"type": "AverageValue", "averageValue": "10"}}}]}}'
kk apply -f - <<<"$queue_fhpa" >/dev/null
check "an empty queue scales nginx to 0" wait_until 10 replicas_are 0
check "with ScaledToZero True ($(zero_of))" wait_until 5 zero_is "True ScaledToZero"
queue 20
check "20 queued wake it: 0 -> 2" wait_until 10 replicas_are 2
check "with ScaledToZero False ($(zero_of))" wait_until 5 zero_is "False NotScaledToZero"
kk scale deployment nginx --replicas=0 >/dev/null
disabled='False ScalingDisabled scaling is disabled since the replica count of the target is zero'
check "scaled to 0 with kubectl: ScalingDisabled" wait_until 10 active_is queue "$disabled"
check "and left at 0 with 20 queued" bash -c "sleep 2; test \"\$(kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' get deploy nginx -o jsonpath='{.spec.replicas}')\" = 0"
finish

#!/usr/bin/env bash
# The first commands operators type against the simulated control plane, with
# the real kubectl, while `fedmetrics serve --enable-autoscaler` records its
# Events: --sort-by (kubectl asks the Table's rows to carry whole objects,
# includeObject=Object), --watch (the watch's events are Tables with the same
# columns, and a Table's resourceVersion is where kubectl watches from), and
# the Event field selectors kube-apiserver supports, which `kubectl describe`
# and `kubectl events --for` send.
# Usage: kubectl_control_plane_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/test/e2e/karmada.world.yaml"
start_serve "$E2E_TMP/serve.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
  --enable-autoscaler --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
  --horizontal-pod-autoscaler-sync-period 2s --horizontal-pod-autoscaler-cpu-initialization-period 1s \
  --horizontal-pod-autoscaler-initial-readiness-delay 1s

# nginx scales its Deployment (Normal SuccessfulRescale: no scale-up
# stabilization window to wait for); ghost's target does not exist (Warning
# FailedGetScale). Both are synced as soon as they are seen.
fhpa() {  # fhpa NAME TARGET
  cat <<YAML
apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: $1, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: $2}
  minReplicas: 1
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 10}}
YAML
}
{ fhpa nginx nginx; echo ---; fhpa ghost ghost; } | kk apply -f - >/dev/null
reasons() { kk get events -n default -o jsonpath='{range .items[*]}{.reason}{"\n"}{end}' 2>/dev/null; }
both_recorded() { r=$(reasons); grep -q FailedGetScale <<<"$r" && grep -q SuccessfulRescale <<<"$r"; }
check "the autoscaler records a FailedGetScale and a SuccessfulRescale Event" wait_until 15 both_recorded
# The autoscaler stops here, so that the Events hold still while they are read.
stop "$serve_pid"
all=$(kk get events -A -o json)

# --sort-by: kubectl asks includeObject=Object and sorts on the rows' objects.
sorted=$(kk get events -A --sort-by=.lastTimestamp 2>&1 || true)
echo "$sorted" | sed 's/^/    /'
names() { json_get "$1" "' '.join(sorted(i['metadata']['name'] for i in d['items'] if ${2:-True}))"; }
printed=$(awk 'NR > 1 {print $2}' <<<"$sorted")
check "kubectl get events -A --sort-by=.lastTimestamp lists every Event" \
  test "$(tr ' ' '\n' <<<"$printed" | sort | xargs)" = "$(names "$all")"
in_order() {  # in_order LIST_JSON "NAME..." -> the named Events' lastTimestamps never go down
  /usr/bin/python3 -c 'import json, sys
t = {i["metadata"]["name"]: i["lastTimestamp"] for i in json.loads(sys.argv[1])["items"]}
s = [t[n] for n in sys.argv[2].split()]
sys.exit(0 if s and s == sorted(s) else 1)' "$1" "$2"
}
check "in lastTimestamp order" in_order "$all" "$printed"
check "kubectl get events --sort-by (one namespace) lists them too" \
  grep -q FailedGetScale <<<"$(kk get events --sort-by=.lastTimestamp 2>&1)"
fhpas=$(kk get fhpa --sort-by=.spec.scaleTargetRef.name --no-headers 2>&1 || true)
check "kubectl get fhpa --sort-by=.spec.scaleTargetRef.name: ghost, then nginx" \
  test "$(awk '{print $1}' <<<"$fhpas" | tr '\n' ' ')" = "ghost nginx "
pods=$(km member1 get pods -l app=nginx --sort-by=.status.podIP --no-headers 2>&1 || true)
member1_pods=$(km member1 get pods -l app=nginx -o name | wc -l)
check "a member too: kubectl get pods --sort-by=.status.podIP lists member1's $member1_pods pods" \
  test "$member1_pods" -gt 0 -a "$(grep -c '^nginx-' <<<"$pods")" = "$member1_pods"
table() {  # table PATH: the Table kubectl get would receive
  curl -sk -H 'Authorization: Bearer admin-token' -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' "$karmada$1"
}
one=$(table /apis/autoscaling.karmada.io/v1alpha1/namespaces/default/federatedhpas/ghost)
check "a Table of one object has that object's resourceVersion" \
  test "$(json_get "$one" "d['metadata']['resourceVersion']")" = "$(kk get fhpa ghost -o jsonpath='{.metadata.resourceVersion}')"
check "includeObject=None: no objects in the rows" \
  test "$(json_get "$(table '/api/v1/namespaces/default/events?includeObject=None')" "set(r['object'] for r in d['rows'])")" = "{None}"

# Field selectors on Events.
describe=$(kk describe fhpa ghost 2>&1 || true)
ghost_events=$(sed -n '/^Events:/,$p' <<<"$describe")
echo "$ghost_events" | sed 's/^/    /'
check "kubectl describe fhpa ghost shows its FailedGetScale Event" grep -Eq '^ *Warning +FailedGetScale ' <<<"$ghost_events"
check "and not nginx's" test "$(grep -c SuccessfulRescale <<<"$ghost_events")" = 0
for_ghost=$(kk events --for federatedhpa/ghost 2>&1 || true)
echo "$for_ghost" | sed 's/^/    /'
check "kubectl events --for federatedhpa/ghost: its Events only" \
  test "$(grep -c FailedGetScale <<<"$for_ghost") $(grep -ci 'federatedhpa/nginx' <<<"$for_ghost")" = "1 0"
warnings=$(kk get events -A --field-selector type=Warning -o json 2>&1 || true)
check "--field-selector type=Warning: Warnings only" \
  test "$(json_get "$warnings" "sorted(set(i['type'] for i in d['items']))")" = "['Warning']"
check "and all of them" test "$(names "$warnings")" = "$(names "$all" "i['type'] == 'Warning'")"
source_events=$(kk get events -A --field-selector source=fedmetrics-autoscaler -o json 2>&1 || true)
check "--field-selector source=fedmetrics-autoscaler (the install guide's check): every Event of the autoscaler" \
  test "$(names "$source_events")" = "$(names "$all")"
check "--field-selector source=kubelet: none" \
  test "$(kk get events -A --field-selector source=kubelet -o jsonpath='{.items[*].metadata.name}')" = ""
check "--field-selector involvedObject.kind=FederatedHPA,involvedObject.name!=ghost: nginx's" \
  test "$(kk get events --field-selector involvedObject.kind=FederatedHPA,involvedObject.name!=ghost \
    -o jsonpath='{.items[*].involvedObject.name}' | tr ' ' '\n' | sort -u | xargs)" = nginx
unknown=$(kk get events --field-selector message=x 2>&1 || true)
check "an unknown field is kube-apiserver's 400: field label not supported" \
  grep -q 'field label not supported: message' <<<"$unknown"
# kubectl describe cronfhpa finds its Events the same way (an Event recorded
# here by hand, while kubectl get events -w looks on).
events_out="$E2E_TMP/watch-events.out"
spawn "$events_out" kubectl --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" get events -w
events_pid=$spawned
check "kubectl get events -w prints the rows" wait_for_log "$events_out" '^ghost\.' 10
kk apply -f "$src/examples/cronfederatedhpa/nginx-business-hours.yaml" >/dev/null
cron_uid=$(kk get cronfhpa nginx-business-hours -o jsonpath='{.metadata.uid}')
kk create -f - >/dev/null <<YAML
apiVersion: v1
kind: Event
metadata: {name: nginx-business-hours.1, namespace: default}
involvedObject: {apiVersion: autoscaling.karmada.io/v1alpha1, kind: CronFederatedHPA, name: nginx-business-hours,
                 namespace: default, uid: "$cron_uid"}
reason: ScaleSucceeded
message: FederatedHPA nginx set to minReplicas 4
type: Normal
source: {component: e2e}
YAML
check "kubectl describe cronfhpa shows its Event" \
  grep -Eq '^ *Normal +ScaleSucceeded .* e2e +FederatedHPA nginx set' <<<"$(kk describe cronfhpa nginx-business-hours 2>&1 | sed -n '/^Events:/,$p')"
new_event_row() { awk '$1 == "nginx-business-hours.1" && $2 == "Normal" && $3 == "ScaleSucceeded"' "$events_out" | grep -q .; }
check "kubectl get events -w prints the new Event with its TYPE and REASON" wait_until 10 new_event_row
stop "$events_pid" KILL   # kubectl exits 1 on SIGTERM
sed 's/^/    /' "$events_out"

# --watch: the rows after a change keep the Table's columns.
watch_out="$E2E_TMP/watch-fhpa.out"
spawn "$watch_out" kubectl --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" get fhpa nginx -w
watch_pid=$spawned
check "kubectl get fhpa nginx -w prints the row" wait_for_log "$watch_out" '^nginx ' 10
kk patch fhpa nginx --type=merge -p '{"spec":{"maxReplicas":12}}' >/dev/null
maxpods_12() { awk '$1 == "nginx" && $5 == 12' "$watch_out" | grep -q .; }
check "after a change, a row with MAXPODS 12 and the replica count" wait_until 10 maxpods_12
stop "$watch_pid" KILL   # kubectl exits 1 on SIGTERM
sed 's/^/    /' "$watch_out"
check "every row has the columns NAME REFERENCE-KIND REFERENCE-NAME MINPODS MAXPODS REPLICAS AGE" \
  test "$(awk 'NR > 1 && NF != 7' "$watch_out" | wc -l) $(head -1 "$watch_out" | awk '{print $2, $6}')" = "0 REFERENCE-KIND REPLICAS"

deploy_out="$E2E_TMP/watch-deploy.out"
spawn "$deploy_out" kubectl --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" get deploy -w
deploy_pid=$spawned
check "kubectl get deploy -w prints the row" wait_for_log "$deploy_out" '^nginx ' 10
kk scale deploy nginx --replicas=3 >/dev/null
ready_of_3() { awk '$1 == "nginx" && $2 ~ /^[0-9]+\/3$/' "$deploy_out" | grep -q .; }
check "after kubectl scale --replicas=3, a row READY n/3" wait_until 10 ready_of_3
stop "$deploy_pid" KILL   # kubectl exits 1 on SIGTERM
sed 's/^/    /' "$deploy_out"
check "every row of get deploy -w has its READY column" test "$(awk 'NR > 1 && $2 !~ /^[0-9]+\/[0-9]+$/' "$deploy_out" | wc -l)" = 0
finish

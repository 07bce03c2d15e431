#!/usr/bin/env bash
# Distributed mode end to end (docs/distributed-mode.md) with the real
# kubectl on the simulated world, whose members run their own HPA controllers:
# examples/federatedhpa/nginx-distributed.yaml gets one HPA per member with
# its share and the template the retain label; member1 hot on its own load
# pegs its HPA at its max and the loop moves maxReplicas to it (a Rebalanced
# Event); with fedmetrics stopped member1 keeps autoscaling on its own up to
# its max; fedmetrics back rebalances from where the members are (no reset:
# member1 wants more, no donor has room, ScalingLimited); the invariants hold
# at every observation; back to centralized, the member HPAs and the label
# are gone.
# Usage: distributed_mode_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/distributed_lib.sh"
bin=$1
src=$2

distributed_world

check "each member gets an HPA with its share: min 1, max 3" wait_until 20 shares_are 1/3 1/3
check "labelled managed-by fedmetrics" \
  test "$(km member1 get hpa nginx -o jsonpath='{.metadata.labels.app\.kubernetes\.io/managed-by}')" = fedmetrics
check "the template is labelled to retain member replicas" \
  test "$(kk get deployment nginx -o jsonpath='{.metadata.labels.resourcetemplate\.karmada\.io/retain-replicas}')" = true
check "the shares are readable on the FederatedHPA" \
  fhpa_is '{.metadata.annotations.autoscaling\.fedmetrics\.io/distribution}' \
  '{"member1":{"minReplicas":1,"maxReplicas":3},"member2":{"minReplicas":1,"maxReplicas":3}}'
check "no scale written by the loop" bash -c "! grep -q ' -> .* replicas' '$E2E_TMP/serve.log'"

# member1 hot on its own load: its HPA scales to its max 3 and says
# TooManyReplicas; member2 idles with spare (3 - 1): the loop moves it.
check "member1 hot (200m of its own; pods request 25m)" \
  test "$(sim_put /sim/v1/namespaces/default/workloads/nginx/members/member1/load '{"cpu":"200m"}')" = 200
check "maxReplicas moved to member1: 1/5, member2 1/1" wait_until 90 shares_are 1/5 1/1
events "$E2E_TMP/events.txt"
check "a Rebalanced Event on the FederatedHPA ($(grep Rebalanced "$E2E_TMP/events.txt" | head -1))" \
  grep -qx 'Normal Rebalanced: moved 2 of maxReplicas from member2 (now 1) to member1 (now 5)' "$E2E_TMP/events.txt"
# The distributed-mode counters follow: two member HPAs created, one move of
# maxReplicas (written as an update of each member HPA).
scrape() { curl -sk "$url/metrics" >"$E2E_TMP/metrics.txt"; }
series() { awk -v s="$1" '$1 == s { print $2 }' "$E2E_TMP/metrics.txt"; }
writes() { series "fedmetrics_federatedhpa_distributed_member_hpa_writes_total{operation=\"$1\",result=\"$2\"}"; }
counted() { scrape; [ "$(series "$1")" = "$2" ]; }
check "fedmetrics_federatedhpa_distributed_rebalances_total counted the move" \
  wait_until 5 counted fedmetrics_federatedhpa_distributed_rebalances_total 1
check "member HPA writes counted: $(writes create success) created, $(writes update success) updated" \
  bash -c "[ '$(writes create success)' = 2 ] && [ '$(writes update success)' -ge 2 ]"
# The status tells the rest: every member HPA able to scale and active, their
# cpu utilization weighted by replicas, their latest scale time.
story() {
  [ "$(condition AbleToScale) $(condition ScalingActive)" = "True/MembersAbleToScale True/MembersScalingActive" ] &&
    [ -n "$(fhpa '{.status.currentMetrics[0].resource.current.averageUtilization}')" ] &&
    [ -n "$(fhpa '{.status.lastScaleTime}')" ]
}
check "status: AbleToScale, ScalingActive True on every member, currentMetrics and lastScaleTime from the members" \
  wait_until 10 story
check "the annotation follows" bash -c "[[ '$(annotation)' == *'\"maxReplicas\":5'* ]]"

# fedmetrics stopped: member1's own HPA keeps scaling within its max.
stop "$serve_pid"
check "with fedmetrics stopped, member1 still scales on its own, up to 5 pods" wait_until 90 member_pods_are member1 5

# fedmetrics back: it starts from the shares and the members as they are (no
# reset to the initial split): member1 pegged at 5 wants more, member2 has no
# spare, so nothing moves and the FederatedHPA says ScalingLimited.
start_serve "$E2E_TMP/serve2.log" "${serve_args[@]}"
limited() { invariants; [ "$(condition ScalingLimited)" = True/TooManyReplicas ]; }
check "back: ScalingLimited True TooManyReplicas (member1 wants more, no donor has room)" wait_until 20 limited
check "back: the shares are where they were, not reset (member1 $(share member1), member2 $(share member2))" \
  bash -c "[ '$(share member1)/$(share member2)' = 1/5/1/1 ]"
check "back: status currentReplicas is the members' sum (5 + 1)" \
  wait_until 10 fhpa_is '{.status.currentReplicas}' 6
invariants_held

# Back to centralized: our member HPAs deleted, the label and annotation removed.
check "remove the mode annotation" kk annotate fhpa nginx autoscaling.fedmetrics.io/mode-
gone() { ! km member1 get hpa nginx >/dev/null 2>&1 && ! km member2 get hpa nginx >/dev/null 2>&1; }
check "the member HPAs are deleted" wait_until 20 gone
check "the deletions counted by the restarted replica" \
  wait_until 5 counted 'fedmetrics_federatedhpa_distributed_member_hpa_writes_total{operation="delete",result="success"}' 2
check "the retain label is removed" \
  wait_until 10 bash -c "[ -z \"\$(kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' get deployment nginx -o jsonpath='{.metadata.labels.resourcetemplate\.karmada\.io/retain-replicas}')\" ]"
check "the distribution annotation is removed" wait_until 10 fhpa_is '{.metadata.annotations.autoscaling\.fedmetrics\.io/distribution}' ""
check "scaled centrally again" wait_until 20 grep -q "left distributed mode: scaled centrally again" "$E2E_TMP/serve2.log"
central() {
  [ "$(condition ScalingActive)" = True/ValidMetricFound ] &&
    [ "$(fhpa '{.status.desiredReplicas}')" = "$(kk get deployment nginx -o jsonpath='{.spec.replicas}')" ]
}
check "and the status says so: the central loop's ScalingActive (ValidMetricFound), its desiredReplicas on the Deployment" \
  wait_until 20 central
finish

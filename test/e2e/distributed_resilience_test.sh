#!/usr/bin/env bash
# Distributed mode's resilience property (shared/specs/distributed.md, issue
# 18), end to end with the real kubectl on the simulated world whose members
# run their own HPA controllers: with fedmetrics stopped, load rising on
# member2 makes member2's own HPA scale member2's pods up to its max (3); when
# fedmetrics comes back it rebalances from where the members are, without a
# reset: member2 (pegged, TooManyReplicas) gets member1's spare (max 5) and
# never loses a pod on the way; the FederatedHPA's status and Events say so.
# Then the FederatedHPA deleted while a member is unreachable: its member
# HPAs are collected once the member answers again (no orphan).
# Usage: distributed_resilience_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/distributed_lib.sh"
bin=$1
src=$2

distributed_world
check "each member gets its share: min 1, max 3" wait_until 20 shares_are 1/3 1/3
check "one pod in each member" test "$(member_pods member1)/$(member_pods member2)" = 1/1

# fedmetrics stopped; then member2 hot on its own load.
stop "$serve_pid"
check "fedmetrics stopped, member2 hot (200m of its own; pods request 25m)" \
  test "$(sim_put /sim/v1/namespaces/default/workloads/nginx/members/member2/load '{"cpu":"200m"}')" = 200
check "member2's own HPA scales member2's pods up to its max, 3" wait_until 60 member_pods_are member2 3
member2_pegged() {
  [ "$(km member2 get hpa nginx -o jsonpath='{.status.currentReplicas}/{.status.conditions[?(@.type=="ScalingLimited")].reason}')" = 3/TooManyReplicas ]
}
check "member2's HPA says it wants more: currentReplicas 3, ScalingLimited TooManyReplicas" wait_until 20 member2_pegged
check "member1 idles with its one pod" test "$(member_pods member1)" = 1
check "nothing moved while fedmetrics was down (member1 $(share member1), member2 $(share member2))" shares_are 1/3 1/3

# fedmetrics back: from where the members are. member2 pegged at 3 wants
# more, member1 has 2 spare (3 - max(1, 1, 1)): 2 of member1's max move to
# member2. member2's pods are watched at every observation: a reset to the
# initial split would scale them down.
start_serve "$E2E_TMP/serve2.log" "${serve_args[@]}"
: >"$E2E_TMP/member2-pods"
moved() {
  member_pods member2 >>"$E2E_TMP/member2-pods"
  shares_are 1/1 1/5
}
check "back: maxReplicas moved to member2: member1 1/1, member2 1/5" wait_until 30 moved
check "member2's own HPA scales on, up to its new max 5" wait_until 60 member_pods_are member2 5
check "member2 never fell below its 3 pods on the way ($(sort -n "$E2E_TMP/member2-pods" | head -1) at least)" \
  test "$(sort -n "$E2E_TMP/member2-pods" | head -1)" -ge 3
events "$E2E_TMP/events.txt"
check "a Rebalanced Event: $(grep Rebalanced "$E2E_TMP/events.txt" | head -1)" \
  grep -qx 'Normal Rebalanced: moved 2 of maxReplicas from member1 (2) to member2 (now 5)' "$E2E_TMP/events.txt"
check "status currentReplicas is the members' sum (1 + 5)" wait_until 20 fhpa_is '{.status.currentReplicas}' 6
limited() { [ "$(condition ScalingLimited)" = True/TooManyReplicas ]; }
check "status ScalingLimited True TooManyReplicas (member2 wants more, member1 has no spare)" wait_until 20 limited
template_replicas_are() { [ "$(kk get deployment nginx -o jsonpath='{.spec.replicas}')" = "$1" ]; }
check "the template's replicas follow the members' sum (6)" wait_until 20 template_replicas_are 6
invariants_held

# The FederatedHPA deleted while member2 cannot be reached: member1's HPA is
# collected at once, member2's once it answers again.
check "member2 black-holed" test "$(sim_put /sim/v1/members/member2/faults '{"blackhole":true}')" = 200
check "kubectl delete the FederatedHPA" kk delete fhpa nginx
no_hpa() { ! km "$1" get hpa nginx >/dev/null 2>&1; }
check "member1's HPA is collected" wait_until 20 no_hpa member1
check "member2 answers again" test "$(sim_put /sim/v1/members/member2/faults '{}')" = 200
check "member2's HPA is collected" wait_until 30 no_hpa member2
check "the collection is logged" grep -q "deleted the member HPA default/nginx in member2: its FederatedHPA is gone" "$E2E_TMP/serve2.log"
finish

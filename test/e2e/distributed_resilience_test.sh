#!/usr/bin/env bash
# Distributed mode's resilience property (docs/distributed-mode.md, issue
# 18), end to end with the real kubectl on the simulated world whose members
# run their own HPA controllers: with fedmetrics stopped, load rising on
# member2 makes member2's own HPA scale member2's pods up to its max (3); when
# fedmetrics comes back it rebalances from where the members are, without a
# reset: member2 (pegged, TooManyReplicas) gets member1's spare (max 5) and
# never loses a pod on the way; the FederatedHPA's status and Events say so.
# Then a member NotReady: held, left out and rejoining, each named by the
# status and one Event, and the rejoin's pods above maxReplicas explained.
# Then the FederatedHPA deleted while a member is unreachable: the deletion
# removes the retain label (kubectl scale works again) and its member HPAs
# are collected, member2's once it answers again (no orphan).
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
  grep -qx 'Normal Rebalanced: moved 2 of maxReplicas from member1 (now 1) to member2 (now 5)' "$E2E_TMP/events.txt"
check "status currentReplicas is the members' sum (1 + 5)" wait_until 20 fhpa_is '{.status.currentReplicas}' 6
limited() { [ "$(condition ScalingLimited)" = True/TooManyReplicas ]; }
check "status ScalingLimited True TooManyReplicas (member2 wants more, member1 has no spare)" wait_until 20 limited
template_replicas_are() { [ "$(kk get deployment nginx -o jsonpath='{.spec.replicas}')" = "$1" ]; }
check "the template's replicas follow the members' sum (6)" wait_until 20 template_replicas_are 6
invariants_held

# A member that cannot be reached is named by the status and by Events, not
# only the log. fedmetrics now takes the members from Karmada's Clusters
# (which say when one is NotReady), with a rebalance window of 6s: member2
# refusing connections is held (its share kept), then left out (its share to
# member1), then rejoins. member1, loaded meanwhile, scales into member2's
# share while member2 keeps running its 5 pods: at the rejoin the members
# really run more than maxReplicas, and the status says why until their HPAs
# have scaled down to their new shares.
stop "$serve_pid"
start_serve "$E2E_TMP/serve3.log" --karmada-kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --enable-autoscaler \
  --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --leader-elect=false --horizontal-pod-autoscaler-sync-period 2s \
  --distributed-rebalance-window 6s --distributed-orphan-sweep-period 4s
reachable() { fhpa '{.status.conditions[?(@.type=="MembersReachable")].message}'; }
reached_is() { [ "$(condition MembersReachable)" = "$1" ]; }
check "member2 refuses connections" test "$(sim_put /sim/v1/members/member2/faults '{"refuse":true}')" = 200
check "status: MembersReachable False, MembersHeld" wait_until 20 reached_is False/MembersHeld
check "naming member2 and its share kept ($(reachable))" \
  bash -c "[[ '$(reachable)' == 'member2 held: NotReady since '*': its share (min 1, max 5) is kept until '* ]]"
check "status: after the window, MembersLeftOut" wait_until 20 reached_is False/MembersLeftOut
check "naming member2 and where its share went ($(reachable))" \
  bash -c "[[ '$(reachable)' == 'member2 left out: NotReady since '* ]]"
member1_share_is() { [ "$(share member1)" = "$1" ]; }
check "member1 gets member2's max: 2/6 (n = 1: min 2)" wait_until 20 member1_share_is 2/6
check "member1 hot" test "$(sim_put /sim/v1/namespaces/default/workloads/nginx/members/member1/load '{"cpu":"200m"}')" = 200
member1_pegged() { [ "$(km member1 get hpa nginx -o jsonpath='{.status.currentReplicas}')" = 6 ]; }
check "member1's own HPA scales member1 to its new max, 6" wait_until 60 member1_pegged
spawn "$E2E_TMP/watched" kubectl --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" get fhpa nginx --watch \
  -o jsonpath='{.status.currentReplicas} {.status.conditions[?(@.type=="ScalingLimited")].message}{"\n"}'
watch_pid=$spawned
check "member2 answers again" test "$(sim_put /sim/v1/members/member2/faults '{}')" = 200
check "status: MembersReachable True once it rejoined" wait_until 20 reached_is True/MembersReachable
check "the shares converge: 1/3 and 1/3" wait_until 30 shares_are 1/3 1/3
check "the members' pods are back within maxReplicas (member1 3, member2 3)" \
  wait_until 30 bash -c "[ \"\$(kubectl --kubeconfig '$E2E_TMP/world/members.kubeconfig' --context member1 get hpa nginx -o jsonpath='{.status.currentReplicas}')\" = 3 ]"
check "status currentReplicas back within maxReplicas" wait_until 20 fhpa_is '{.status.currentReplicas}' 6
stop "$watch_pid" KILL   # kubectl exits 1 on SIGTERM
above=$(awk '$1 > 6' "$E2E_TMP/watched")
check "the rejoin's transient is in the status: member1's 6 and member2's 5 pods ($(echo "$above" | head -1))" \
  test -n "$above"
check "every status above maxReplicas says why" \
  bash -c "! awk '\$1 > 6' '$E2E_TMP/watched' | grep -v ' the members run [0-9]* replicas, more than maxReplicas 6, until their HPAs scale down to their shares'"
events "$E2E_TMP/events.txt"
for reason in MemberHeld MemberLeftOut MemberRejoined; do
  check "one $reason Event: $(grep " $reason: " "$E2E_TMP/events.txt" | head -1)" \
    test "$(grep -c " $reason: member2" "$E2E_TMP/events.txt")" = 1
done
check "its count is 1: not repeated at every sync" \
  test "$(kk get events -n default -o jsonpath='{range .items[?(@.reason=="MemberHeld")]}{.count}{end}')" = 1
check "the rejoin says what member2 ran" grep -q "MemberRejoined: member2 answers again after it was left out: .*its HPA runs 5 replicas" "$E2E_TMP/events.txt"
check "no load on member1 any more" test "$(sim_put /sim/v1/namespaces/default/workloads/nginx/members/member1/load '{"cpu":"0"}')" = 200

# The FederatedHPA deleted while member2 cannot be reached: kubectl delete
# returns once fedmetrics has deleted member1's HPA and removed the retain
# label (member2 does not hold the deletion up); member2's HPA is collected
# once it answers. Afterwards the Deployment is Karmada's again: kubectl
# scale takes effect.
check "member2 black-holed" test "$(sim_put /sim/v1/members/member2/faults '{"blackhole":true}')" = 200
check "kubectl delete the FederatedHPA (it waits for fedmetrics' finalizer)" kk delete fhpa nginx --timeout=30s
check "the FederatedHPA is gone" bash -c "! kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' get fhpa nginx 2>/dev/null"
no_hpa() { ! km "$1" get hpa nginx >/dev/null 2>&1; }
check "member1's HPA is deleted" no_hpa member1
check "the retain label is removed from the Deployment" \
  test -z "$(kk get deployment nginx -o jsonpath='{.metadata.labels.resourcetemplate\.karmada\.io/retain-replicas}')"
check "kubectl scale deploy nginx --replicas=8" kk scale deployment nginx --replicas=8
check "takes effect: the template stays at 8" bash -c "[ \"\$(kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' get deployment nginx -o jsonpath='{.spec.replicas}')\" = 8 ]"
check "member2 answers again" test "$(sim_put /sim/v1/members/member2/faults '{}')" = 200
check "member2's HPA is collected" wait_until 30 no_hpa member2
check "the collection is logged" grep -q "deleted the member HPA default/nginx in member2: its FederatedHPA is gone" "$E2E_TMP/serve3.log"
finish

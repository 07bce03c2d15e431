#!/usr/bin/env bash
# Distributed mode end to end (shared/specs/distributed.md) with the real
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
bin=$1
src=$2

start_sim "$src/test/e2e/karmada.world.yaml" --member-hpa-sync-period 1s
ctl() { curl -sk -o /dev/null -w '%{http_code}' -X PUT "$control$1" -H 'Content-Type: application/json' -d "$2"; }
pods() { km "$1" get pods -l app=nginx --no-headers 2>/dev/null | grep -vc Terminating || true; }
serve_args=(--member-kubeconfig "$E2E_TMP/world/members.kubeconfig" --enable-autoscaler
            --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --leader-elect=false
            --horizontal-pod-autoscaler-sync-period 2s --distributed-rebalance-window 0s)

check "no load anywhere" test "$(ctl /sim/v1/namespaces/default/workloads/nginx/load '{"cpu":"0"}')" = 200
start_serve "$E2E_TMP/serve.log" "${serve_args[@]}"

check "kubectl apply examples/federatedhpa/nginx-distributed.yaml (min 2, max 6)" \
  kk apply -f "$src/examples/federatedhpa/nginx-distributed.yaml"

share() { km "$1" get hpa nginx -o jsonpath='{.spec.minReplicas}/{.spec.maxReplicas}' 2>/dev/null; }
# The spec's invariants, at every observation of both member HPAs: sum of
# max = 6, 1 <= min <= max each, sum of min = max(2, n) = 2. A violation is
# counted (and kept) for the check at the end.
observations=0
invariants() {
  local a b
  a=$(share member1) b=$(share member2)
  [ -n "$a" ] && [ -n "$b" ] || return 0  # not created yet (or deleted at the end)
  observations=$((observations + 1))
  local min1=${a%/*} max1=${a#*/} min2=${b%/*} max2=${b#*/}
  if [ $((max1 + max2)) -ne 6 ] || [ "$min1" -lt 1 ] || [ "$min2" -lt 1 ] || [ "$min1" -gt "$max1" ] ||
     [ "$min2" -gt "$max2" ] || [ $((min1 + min2)) -ne 2 ]; then
    echo "invariants broken: member1 $a, member2 $b" >>"$E2E_TMP/violations"
  fi
}
both_created() { invariants; [ "$(share member1)" = 1/3 ] && [ "$(share member2)" = 1/3 ]; }
check "each member gets an HPA with its share: min 1, max 3" wait_until 20 both_created
check "labelled managed-by fedmetrics" \
  test "$(km member1 get hpa nginx -o jsonpath='{.metadata.labels.app\.kubernetes\.io/managed-by}')" = fedmetrics
check "the template is labelled to retain member replicas" \
  test "$(kk get deployment nginx -o jsonpath='{.metadata.labels.resourcetemplate\.karmada\.io/retain-replicas}')" = true
annotation() { kk get fhpa nginx -o jsonpath='{.metadata.annotations.autoscaling\.fedmetrics\.io/distribution}'; }
check "the shares are readable on the FederatedHPA ($(annotation))" \
  wait_until 10 bash -c "[ -n \"\$(kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' get fhpa nginx -o jsonpath='{.metadata.annotations.autoscaling\.fedmetrics\.io/distribution}')\" ]"
check "no scale written by the loop" bash -c "! grep -q ' -> .* replicas' '$E2E_TMP/serve.log'"

# member1 hot on its own load: its HPA scales to its max 3 and says
# TooManyReplicas; member2 idles with spare (3 - 1): the loop moves it.
check "member1 hot (200m of its own; pods request 25m)" \
  test "$(ctl /sim/v1/namespaces/default/workloads/nginx/members/member1/load '{"cpu":"200m"}')" = 200
rebalanced() { invariants; [ "$(share member1)" = 1/5 ] && [ "$(share member2)" = 1/1 ]; }
check "maxReplicas moved to member1: 1/5, member2 1/1" wait_until 90 rebalanced
kk get events -n default -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}' >"$E2E_TMP/events.txt" 2>&1 || true
check "a Rebalanced Event on the FederatedHPA ($(grep Rebalanced "$E2E_TMP/events.txt" | head -1))" \
  grep -q 'Rebalanced: moved .* to member1' "$E2E_TMP/events.txt"
check "the annotation follows" bash -c "[[ '$(annotation)' == *'\"maxReplicas\":5'* ]]"

# fedmetrics stopped: member1's own HPA keeps scaling within its max.
kill -TERM "$serve_pid"
wait "$serve_pid" 2>/dev/null || true
check "with fedmetrics stopped, member1 still scales on its own, up to 5 pods" wait_until 90 bash -c "[ \"\$(kubectl --kubeconfig '$E2E_TMP/world/members.kubeconfig' --context member1 get pods -l app=nginx --no-headers | grep -vc Terminating)\" = 5 ]"

# fedmetrics back: it starts from the shares and the members as they are (no
# reset to the initial split): member1 pegged at 5 wants more, member2 has no
# spare, so nothing moves and the FederatedHPA says ScalingLimited.
start_serve "$E2E_TMP/serve2.log" "${serve_args[@]}"
limited() {
  invariants
  [ "$(kk get fhpa nginx -o jsonpath='{.status.conditions[?(@.type=="ScalingLimited")].status}/{.status.conditions[?(@.type=="ScalingLimited")].reason}')" = True/TooManyReplicas ]
}
check "back: ScalingLimited True TooManyReplicas (member1 wants more, no donor has room)" wait_until 20 limited
check "back: the shares are where they were, not reset (member1 $(share member1), member2 $(share member2))" \
  bash -c "[ '$(share member1)/$(share member2)' = 1/5/1/1 ]"
check "back: status currentReplicas is the members' sum (5 + 1)" \
  wait_until 10 bash -c "[ \"\$(kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' get fhpa nginx -o jsonpath='{.status.currentReplicas}')\" = 6 ]"
invariants
check "the invariants held at every observation ($observations)" test ! -s "$E2E_TMP/violations"

# Back to centralized: our member HPAs deleted, the label and annotation removed.
check "remove the mode annotation" kk annotate fhpa nginx autoscaling.fedmetrics.io/mode-
gone() { ! km member1 get hpa nginx >/dev/null 2>&1 && ! km member2 get hpa nginx >/dev/null 2>&1; }
check "the member HPAs are deleted" wait_until 20 gone
check "the retain label is removed" \
  wait_until 10 bash -c "[ -z \"\$(kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' get deployment nginx -o jsonpath='{.metadata.labels.resourcetemplate\.karmada\.io/retain-replicas}')\" ]"
check "the distribution annotation is removed" wait_until 10 bash -c "[ -z \"\$(kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' get fhpa nginx -o jsonpath='{.metadata.annotations.autoscaling\.fedmetrics\.io/distribution}')\" ]"
check "scaled centrally again" wait_until 20 grep -q "left distributed mode: scaled centrally again" "$E2E_TMP/serve2.log"
finish

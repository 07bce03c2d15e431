#!/usr/bin/env bash
# Each simulated member runs its own HPA controller (as kube-controller-manager
# does) on its own pods and pod metrics: an HPA created with the real kubectl
# on member1, with load high on member1 alone, scales member1's pods up to
# maxReplicas and its status says ScalingLimited True TooManyReplicas;
# member2 is left alone. No fedmetrics runs here.
# Usage: member_hpa_controller_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/test/e2e/karmada.world.yaml" --member-hpa-sync-period 1s

check "no shared load" test "$(sim_put /sim/v1/namespaces/default/workloads/nginx/load '{"cpu":"0"}')" = 200
check "member1 hot: 100m of its own (its pods request 25m)" \
  test "$(sim_put /sim/v1/namespaces/default/workloads/nginx/members/member1/load '{"cpu":"100m"}')" = 200
member_hpa_yaml 1 3 >"$E2E_TMP/hpa.yaml"
check "one nginx pod in member1 before" test "$(member_pods member1)" = 1
check "kubectl apply the HPA on member1" km member1 apply -f "$E2E_TMP/hpa.yaml"
check "the same HPA on member2 (idle)" km member2 apply -f "$E2E_TMP/hpa.yaml"

hpa1() { km member1 get hpa nginx -o jsonpath="$1"; }
# 1 pod at 100% of its request against 50%: 2 pods; the new pod counts once its
# first full metrics window (15 s) has passed since it became Ready (the cpu
# initialization rules); 2 pods at 100%: 4, limited to 3.
check "member1's HPA scales member1 to maxReplicas (3 pods) within a few sync periods" \
  wait_until 45 member_pods_are member1 3
check "status desiredReplicas 3" wait_until 5 bash -c "[ \"\$(kubectl --kubeconfig '$E2E_TMP/world/members.kubeconfig' --context member1 get hpa nginx -o jsonpath='{.status.desiredReplicas}/{.status.currentReplicas}')\" = 3/3 ]"
limited=$(hpa1 '{.status.conditions[?(@.type=="ScalingLimited")].status}/{.status.conditions[?(@.type=="ScalingLimited")].reason}')
check "ScalingLimited True TooManyReplicas ($limited)" test "$limited" = True/TooManyReplicas
check "AbleToScale True" test "$(hpa1 '{.status.conditions[?(@.type=="AbleToScale")].status}')" = True
check "ScalingActive True ValidMetricFound" \
  test "$(hpa1 '{.status.conditions[?(@.type=="ScalingActive")].status}/{.status.conditions[?(@.type=="ScalingActive")].reason}')" = True/ValidMetricFound
check "lastScaleTime is set" test -n "$(hpa1 '{.status.lastScaleTime}')"
check "currentMetrics: cpu at 100% of request (25m of 25m)" \
  test "$(hpa1 '{.status.currentMetrics[0].resource.current.averageUtilization}')" = 100
check "kubectl get hpa shows 3 replicas" bash -c "kubectl --kubeconfig '$E2E_TMP/world/members.kubeconfig' --context member1 get hpa nginx --no-headers | grep -Eq 'cpu: 100%/50% +1 +3 +3 '"
check "member2 (idle) keeps its one pod" test "$(member_pods member2)" = 1
check "member2's HPA wants 1 and is not limited by max" \
  test "$(km member2 get hpa nginx -o jsonpath='{.status.desiredReplicas}/{.status.conditions[?(@.type=="ScalingLimited")].status}')" = 1/False
world=$(curl -sk "$control/sim/v1/world")
check "the world's placement: member1 3, member2 1" \
  test "$(json_get "$world" "d['workloads'][0]['placement']")" = "{'member1': 3, 'member2': 1}"
finish

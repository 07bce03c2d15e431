#!/usr/bin/env bash
# Scheduled scaling end to end (docs/cron.md) with the real
# kubectl on the simulated world: a CronFederatedHPA whose rule fires every
# minute raises the FederatedHPA's minReplicas and the workload follows;
# another's rules scale a Deployment from 0 (even minutes) and back to 0
# (odd minutes) through its scale subresource; a suspended rule does nothing;
# the status history shows each run with what was applied, and the Events
# say so.
# Usage: cron_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

# The e2e world plus a batch Deployment that starts at 0 replicas.
{
  sed -n '/^members:/,/^users:/p' "$src/test/e2e/karmada.world.yaml" | sed '$d'
  cat <<'YAML'
  - name: batch
    namespace: default
    replicas: 0
    labels: {app: batch}
    containers:
      - name: batch
        image: busybox
        resources:
          requests: {cpu: 25m, memory: 16Mi}
    propagation:
      clusters: [member1, member2]
      weights: {member1: 1, member2: 1}
YAML
} >"$E2E_TMP/world.yaml"
start_sim "$E2E_TMP/world.yaml"
start_serve "$E2E_TMP/serve.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" --enable-autoscaler \
  --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --leader-elect=false --horizontal-pod-autoscaler-sync-period 2s

check "no load on nginx" test "$(sim_put /sim/v1/namespaces/default/workloads/nginx/load '{"cpu":"0"}')" = 200
check "kubectl apply the FederatedHPA nginx (min 1, max 10)" kk apply -f "$src/examples/federatedhpa/nginx.yaml"
cat >"$E2E_TMP/cron.yaml" <<'YAML'
apiVersion: autoscaling.karmada.io/v1alpha1
kind: CronFederatedHPA
metadata: {name: nginx-every-minute, namespace: default}
spec:
  scaleTargetRef: {apiVersion: autoscaling.karmada.io/v1alpha1, kind: FederatedHPA, name: nginx}
  rules:
  - {name: raise, schedule: "* * * * *", targetMinReplicas: 4}
  - {name: suspended, schedule: "* * * * *", targetMaxReplicas: 1, suspend: true}
---
apiVersion: autoscaling.karmada.io/v1alpha1
kind: CronFederatedHPA
metadata: {name: batch-shifts, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: batch}
  rules:
  - {name: start, schedule: "*/2 * * * *", targetReplicas: 3}
  - {name: stop, schedule: "1-59/2 * * * *", targetReplicas: 0}
YAML
batch_is() { [ "$(kk get deployment batch -o jsonpath='{.spec.replicas}')" = "$1" ]; }
check "batch starts at 0 replicas" batch_is 0
check "kubectl apply two CronFederatedHPAs" kk apply -f "$E2E_TMP/cron.yaml"
check "kubectl get cronfhpa shows the targets" bash -c "kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' get cronfhpa | grep -Eq 'nginx-every-minute +FederatedHPA +nginx'"

history() { kk get cronfhpa "$1" -o jsonpath="{.status.executionHistories[?(@.ruleName==\"$2\")]$3}"; }
min_is() { [ "$(kk get fhpa nginx -o jsonpath='{.spec.minReplicas}')" = "$1" ]; }
check "the rule fires within a minute: the FederatedHPA's minReplicas is 4" wait_until 75 min_is 4
replicas_at_least() { [ "$(kk get deployment "$1" -o jsonpath='{.spec.replicas}')" -ge "$2" ]; }
check "the workload follows: nginx at 4 replicas or more" wait_until 30 replicas_at_least nginx 4
check "the history records what was applied ($(history nginx-every-minute raise '.successfulExecutions[0]'))" \
  test "$(history nginx-every-minute raise '.successfulExecutions[0].appliedMinReplicas')" = 4
check "and the next firing ($(history nginx-every-minute raise '.nextExecutionTime'))" \
  test -n "$(history nginx-every-minute raise '.nextExecutionTime')"
kk get events -n default -o jsonpath='{range .items[*]}{.involvedObject.kind} {.type} {.reason}: {.message}{"\n"}{end}' \
  >"$E2E_TMP/events.txt" 2>&1 || true
check "a ScaleSucceeded Event on the CronFederatedHPA ($(grep ScaleSucceeded "$E2E_TMP/events.txt" | head -1))" \
  grep -q '^CronFederatedHPA Normal ScaleSucceeded: rule raise (.*): FederatedHPA nginx set to minReplicas 4, maxReplicas 10$' \
  "$E2E_TMP/events.txt"

# The workload: from 0 on an even minute, back to 0 on the next odd one.
check "batch scaled from 0 to 3 on an even minute" wait_until 135 batch_is 3
check "batch scaled back to 0 on the next odd minute" wait_until 75 batch_is 0
check "the history shows both (start: $(history batch-shifts start '.successfulExecutions[0].appliedReplicas'), stop: $(history batch-shifts stop '.successfulExecutions[0].appliedReplicas'))" \
  test "$(history batch-shifts start '.successfulExecutions[0].appliedReplicas')/$(history batch-shifts stop '.successfulExecutions[0].appliedReplicas')" = 3/0

# By now the every-minute rule ran at least twice, each once.
runs=$(kk get cronfhpa nginx-every-minute -o json | /usr/bin/python3 -c '
import json, sys
h = {e["ruleName"]: e for e in json.load(sys.stdin)["status"]["executionHistories"]}
times = [x["scheduleTime"] for x in h["raise"].get("successfulExecutions", [])]
print(len(times), len(set(times)), len(h["suspended"].get("successfulExecutions", [])) + len(h["suspended"].get("failedExecutions", [])), "nextExecutionTime" in h["suspended"])')
check "the every-minute rule ran at least twice, each scheduleTime once; the suspended rule never ran ($runs)" \
  bash -c "read n unique suspended next <<<'$runs'; [ \$n -ge 2 ] && [ \$n = \$unique ] && [ \$suspended = 0 ] && [ \$next = False ]"
check "the suspended rule left maxReplicas alone" test "$(kk get fhpa nginx -o jsonpath='{.spec.maxReplicas}')" = 10

# The loop's own metrics, named as Karmada's (under our prefix).
curl -sk "$url/metrics" >"$E2E_TMP/metrics.txt"
count_of() { awk -v series="$1" '$1 == series { print $2 }' "$E2E_TMP/metrics.txt"; }
check "rule runs counted: $(count_of 'fedmetrics_cronfederatedhpa_rule_process_duration_seconds_count{result="success"}') successful" \
  test "$(count_of 'fedmetrics_cronfederatedhpa_rule_process_duration_seconds_count{result="success"}')" -ge 4
check "object passes counted: $(count_of 'fedmetrics_cronfederatedhpa_process_duration_seconds_count{result="success"}')" \
  test "$(count_of 'fedmetrics_cronfederatedhpa_process_duration_seconds_count{result="success"}')" -ge 4
check "no failed rule runs" test "$(count_of 'fedmetrics_cronfederatedhpa_rule_process_duration_seconds_count{result="error"}')" = 0
check "a histogram with its buckets (12 bounds from 1 ms, and +Inf)" \
  test "$(grep -c '^fedmetrics_cronfederatedhpa_rule_process_duration_seconds_bucket{result="success",le=' "$E2E_TMP/metrics.txt")" = 13
finish

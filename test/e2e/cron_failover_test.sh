#!/usr/bin/env bash
# CronFederatedHPA across a change of leader (docs/cron.md, "Each
# firing runs once"): two `fedmetrics serve --enable-autoscaler` replicas
# with a short Lease; the leader is killed (SIGKILL: the Lease is not
# released) two seconds before a per-minute rule fires, so that the firing
# falls while no replica leads. The other replica takes over once the Lease
# expires and runs the missed firing at once, with its original
# scheduleTime, exactly once; the following firing runs once too.
# Usage: cron_failover_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/examples/worlds/nginx.yaml"
WAIT_UNTIL_INTERVAL=0.2
replica() { start_replica "$1" --horizontal-pod-autoscaler-sync-period 2s; }
someone_leads() { [ "$(holder)" = "$(identity_of a)" ] || [ "$(holder)" = "$(identity_of b)" ]; }

check "kubectl apply the FederatedHPA nginx" kk apply -f "$src/examples/federatedhpa/nginx.yaml"
cat >"$E2E_TMP/cron.yaml" <<'YAML'
apiVersion: autoscaling.karmada.io/v1alpha1
kind: CronFederatedHPA
metadata: {name: nginx-every-minute, namespace: default}
spec:
  scaleTargetRef: {apiVersion: autoscaling.karmada.io/v1alpha1, kind: FederatedHPA, name: nginx}
  rules:
  - {name: raise, schedule: "* * * * *", targetMinReplicas: 3, successfulHistoryLimit: 10}
YAML
check "kubectl apply a CronFederatedHPA firing every minute" kk apply -f "$E2E_TMP/cron.yaml"
replica a
replica b
check "one replica leads" wait_until 10 someone_leads
if [ "$(holder)" = "$(identity_of a)" ]; then leader=a; follower=b; else leader=b; follower=a; fi
next() { kk get cronfhpa nginx-every-minute -o jsonpath='{.status.executionHistories[0].nextExecutionTime}'; }
check "the leader scheduled the rule (nextExecutionTime $(next))" wait_until 10 bash -c "[ -n \"\$(kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' get cronfhpa nginx-every-minute -o jsonpath='{.status.executionHistories[0].nextExecutionTime}')\" ]"

# Two seconds before the next firing (a firing in under 4 s waits for the one after).
firing=$(next)
left=$(( $(date -d "$firing" +%s) - $(date +%s) ))
if [ "$left" -lt 4 ]; then
  check "the first firing ran on the leader" wait_until 10 bash -c "grep -q 'rule raise' '$E2E_TMP/$leader.log'"
  firing=$(date -u -d "@$(( $(date -d "$firing" +%s) + 60 ))" +%Y-%m-%dT%H:%M:%SZ)
  left=$(( $(date -d "$firing" +%s) - $(date +%s) ))
fi
sleep $(( left - 2 ))
eval "stop \$pid_$leader KILL"
check "the leader killed 2 s before the firing at $firing ($(date -u +%H:%M:%S))" test "$(date +%s)" -lt "$(date -d "$firing" +%s)"
check "the follower takes over once the Lease expires" wait_until 10 holder_is "$(identity_of $follower)"
ran_at() { [ "$(kk get cronfhpa nginx-every-minute -o json | /usr/bin/python3 -c "
import json, sys
h = json.load(sys.stdin)['status']['executionHistories'][0]
print(sum(1 for x in h.get('successfulExecutions', []) if x['scheduleTime'] == '$1'))")" = "${2:-1}" ]; }
check "the follower ran the missed firing with its scheduleTime $firing" wait_until 10 ran_at "$firing"
check "the follower's log says so" grep -q "rule raise ($firing)" "$E2E_TMP/$follower.log"
check "the FederatedHPA's minReplicas is 3" test "$(kk get fhpa nginx -o jsonpath='{.spec.minReplicas}')" = 3
following=$(date -u -d "@$(( $(date -d "$firing" +%s) + 60 ))" +%Y-%m-%dT%H:%M:%SZ)
check "the following firing ($following) runs on the new leader" wait_until 70 ran_at "$following"
sleep 2
check "each scheduleTime ran exactly once" ran_at "$firing" 1
check "(and the following one too)" ran_at "$following" 1
finish

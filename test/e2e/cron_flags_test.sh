#!/usr/bin/env bash
# The CronFederatedHPA flags change what the loop does, without waiting for
# a clock: a CronFederatedHPA whose status (written before serve starts, as
# a replica that led before a restart would have) says its daily rules were
# due two hours ago. With --cron-missed-run-deadline 45m the firing of 30
# minutes ago still runs at once and the one of 70 minutes ago is skipped,
# logged and counted in fedmetrics_cronfederatedhpa_missed_runs_total (the
# default, 5m, would skip both). With --cron-default-time-zone Asia/Kolkata
# (UTC+05:30, no daylight saving) a rule "0 0 * * *" without timeZone is
# next due at 18:30 UTC, and one with timeZone UTC at 00:00 UTC.
# Usage: cron_flags_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/examples/worlds/nginx.yaml"
utc() { date -u -d "$1" +%Y-%m-%dT%H:%M:00Z; }
recent=$(utc '30 minutes ago')
old=$(utc '70 minutes ago')
due=$(utc '2 hours ago')
daily_at() { date -u -d "$1" '+%-M %-H * * *'; }  # the cron schedule firing daily at that minute (UTC)
cat >"$E2E_TMP/cron.yaml" <<YAML
apiVersion: autoscaling.karmada.io/v1alpha1
kind: CronFederatedHPA
metadata: {name: nginx-daily, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  rules:
  - {name: recent, schedule: "$(daily_at "$recent")", timeZone: UTC, targetReplicas: 3}
  - {name: old, schedule: "$(daily_at "$old")", timeZone: UTC, targetReplicas: 5}
  - {name: zoned, schedule: "0 0 * * *", targetReplicas: 1}
  - {name: utc, schedule: "0 0 * * *", timeZone: UTC, targetReplicas: 1}
YAML
check "kubectl apply a CronFederatedHPA with daily rules" kk apply -f "$E2E_TMP/cron.yaml"
check "its status says the rules were due from $due" kk patch cronfhpa nginx-daily --subresource=status --type=merge \
  -p "{\"status\":{\"executionHistories\":[{\"ruleName\":\"recent\",\"nextExecutionTime\":\"$due\"},{\"ruleName\":\"old\",\"nextExecutionTime\":\"$due\"}]}}"

start_serve "$E2E_TMP/serve.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" --enable-autoscaler \
  --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --leader-elect=false --horizontal-pod-autoscaler-sync-period 2s \
  --cron-missed-run-deadline 45m --cron-default-time-zone Asia/Kolkata

history() { kk get cronfhpa nginx-daily -o jsonpath="{.status.executionHistories[?(@.ruleName==\"$1\")]$2}"; }
ran() { [ "$(history recent '.successfulExecutions[0].scheduleTime')" = "$recent" ]; }
check "the firing of $recent (30 minutes ago, within the 45m deadline) runs at once" wait_until 15 ran
check "and scaled the Deployment to 3" test "$(kk get deployment nginx -o jsonpath='{.spec.replicas}')" = 3
check "the firing of $old (70 minutes ago) is skipped, and the log says so" \
  grep -q "rule old: the run of $old was missed by more than --cron-missed-run-deadline; skipped" "$E2E_TMP/serve.log"
check "and it never ran" test -z "$(history old '.successfulExecutions')$(history old '.failedExecutions')"
missed() { curl -sk "$url/metrics" | awk '$1 == "fedmetrics_cronfederatedhpa_missed_runs_total" { print $2 }'; }
check "the skipped firing is counted once in fedmetrics_cronfederatedhpa_missed_runs_total ($(missed))" test "$(missed)" = 1

# --cron-default-time-zone: midnight in Kolkata is 18:30 UTC.
next_ends() { [[ "$(history "$1" '.nextExecutionTime')" == *"$2" ]]; }
check "a rule without timeZone is next due at midnight in Asia/Kolkata ($(history zoned '.nextExecutionTime'))" \
  wait_until 10 next_ends zoned T18:30:00Z
check "a rule with timeZone UTC keeps its own zone ($(history utc '.nextExecutionTime'))" next_ends utc T00:00:00Z
finish

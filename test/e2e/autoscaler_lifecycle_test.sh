#!/usr/bin/env bash
# The live loop against the simulated control plane across syncs and a
# restart: a FederatedHPA that fails the same way at every sync has one
# Event whose count goes up (client-go's correlation: the Event is patched,
# not written again), and a restarted `fedmetrics serve` starts from the
# status on the object, so a condition that did not change keeps its
# lastTransitionTime.
# Usage: autoscaler_lifecycle_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/examples/worlds/nginx.yaml"
WAIT_UNTIL_INTERVAL=0.2
serve_loop() {  # LOG
  start_serve "$1" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
    --enable-autoscaler --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --horizontal-pod-autoscaler-sync-period 1s
  serve_pid=${E2E_PIDS[-1]}
}
serve_loop "$E2E_TMP/serve.log"

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
finish

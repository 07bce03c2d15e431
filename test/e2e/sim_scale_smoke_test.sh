#!/usr/bin/env bash
# The simulator at its users' size, and the bench worlds' generator:
# bench/gen-world.sh writes a world of 100 members and 10,000 Deployments
# (with a FederatedHPA each), `fedmetrics sim` starts on it within a generous
# bound of its own cpu time (about 2 s on this machine; a start that grows
# with the square of the Deployments needs minutes), and serves what was
# asked for: 200 pods on each member, 10,000 Deployments of 2 ready replicas
# on the control plane. The bound is on cpu, not on the clock, so that a
# busy machine does not fail it. bench/sim_scale.sh's own figures, at small
# sizes, are checked by scale_smoke_test.sh.
# Usage: sim_scale_smoke_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2
max_start_cpu_s=20
hz=$(getconf CLK_TCK)
cpu_seconds() { awk -v hz="$hz" '{ sub(/^.*\) /, ""); printf "%d", ($12 + $13) / hz }' "/proc/$1/stat"; }

gen() { bash "$src/bench/gen-world.sh" "$@"; }
gen --members 100 --deployments 10000 --fhpa-out "$E2E_TMP/fhpa.yaml" >"$E2E_TMP/world.yaml"
check "gen-world: 10,000 Deployments" test "$(grep -c '^  - name: w' "$E2E_TMP/world.yaml")" = 10000
check "gen-world: 100 members" test "$(grep -c '^  - {name: member' "$E2E_TMP/world.yaml")" = 100
check "gen-world: a FederatedHPA per Deployment" test "$(grep -c '^kind: FederatedHPA' "$E2E_TMP/fhpa.yaml")" = 10000
status=0
gen --members 3 --spread 4 >/dev/null 2>"$E2E_TMP/gen.err" || status=$?
check "gen-world: a spread over more members than there are is refused (exit $status)" test "$status" = 2
check "gen-world: and says why" grep -q -- "--spread must be between 1 and --members (3)" "$E2E_TMP/gen.err"

spawn "$E2E_TMP/sim.log" "$bin" sim --world "$E2E_TMP/world.yaml" --out-dir "$E2E_TMP/world"
sim_pid=$spawned
ready() { grep -q "world ready" "$E2E_TMP/sim.log"; }
over_bound() { [ "$(cpu_seconds "$sim_pid")" -ge "$max_start_cpu_s" ]; }
deadline=$((SECONDS + 100))
until ready || over_bound || ! kill -0 "$sim_pid" 2>/dev/null || [ $SECONDS -ge $deadline ]; do sleep 0.1; done
cpu=$(cpu_seconds "$sim_pid" 2>/dev/null || echo '?')
check "sim: 100 members x 10,000 Deployments ready within $max_start_cpu_s s of cpu (at ${cpu} s: $(grep -o 'world ready in [0-9]* ms' "$E2E_TMP/sim.log" || echo 'not ready'))" ready
if ready; then
  km() { kubectl --kubeconfig "$E2E_TMP/world/members.kubeconfig" --context "$1" --request-timeout=20s "${@:2}"; }
  pods=$(km member1 get --raw /api/v1/pods | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')
  check "member1 runs its share: 200 pods ($pods)" test "$pods" = 200
  summary=$(kk get --raw /apis/apps/v1/deployments | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
print(len(items), sum(1 for d in items if d["status"].get("readyReplicas") == 2))')
  check "the control plane lists 10,000 Deployments of 2 ready replicas ($summary)" test "$summary" = "10000 10000"
  gen --members 100 --deployments 10000 --fhpa 3 --fhpa-out "$E2E_TMP/fhpa3.yaml" >/dev/null
  check "the generated FederatedHPAs are accepted" kk create -f "$E2E_TMP/fhpa3.yaml"
  check "and name their Deployments" test "$(kk get fhpa w3 -o jsonpath='{.spec.scaleTargetRef.name}')" = w3
fi
stop "$sim_pid"

finish

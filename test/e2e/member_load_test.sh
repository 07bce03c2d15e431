#!/usr/bin/env bash
# Load per member: the simulator's control endpoint gives member1 a load of
# its own while member2 idles, and each member's metrics.k8s.io (read with the
# real kubectl through the member's own kubeconfig context) shows it; DELETE
# returns member1 to the workload's shared load.
# Usage: member_load_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/test/e2e/karmada.world.yaml"
ctl() { curl -sk -X "$1" "$control$2" -H 'Content-Type: application/json' ${3:+-d "$3"} -o "$E2E_TMP/ctl.out" -w '%{http_code}'; }
# The CPU, in millicores, that the nginx pods of a member use (sum).
cpu_m() {
  json_get "$(km "$1" get --raw /apis/metrics.k8s.io/v1beta1/namespaces/default/pods)" \
    "round(sum(float(c['usage']['cpu'].rstrip('num')) * {'n': 1e-6, 'u': 1e-3, 'm': 1}.get(c['usage']['cpu'][-1], 1000) for i in d['items'] if i['metadata']['name'].startswith('nginx') for c in i['containers']))"
}
workload=/sim/v1/namespaces/default/workloads/nginx

check "the world's load is shared: member1's pod uses 25m (100m over 2 pods, capped at its limit)" test "$(cpu_m member1)" = 25
check "no own load for member1 yet (404)" test "$(ctl GET "$workload/members/member1/load")" = 404
check "the shared load goes to 0" test "$(ctl PUT "$workload/load" '{"cpu":"0"}')" = 200
check "member1 gets a load of its own (200)" test "$(ctl PUT "$workload/members/member1/load" '{"cpu":"20m"}')" = 200
check "the answer is member1's load" test "$(json_get "$(cat "$E2E_TMP/ctl.out")" "d['cpu']")" = 20m
check "member1 is hot: its pod uses 21m (20m + the 1m baseline)" test "$(cpu_m member1)" = 21
check "member2 idles: its pod uses the 1m baseline" test "$(cpu_m member2)" = 1
check "GET reads member1's own load" test "$(ctl GET "$workload/members/member1/load")" = 200
world=$(curl -sk "$control/sim/v1/world")
check "the world summary lists member1's own load" \
  test "$(json_get "$world" "d['workloads'][0]['memberLoads']")" = "{'member1': {'cpu': '20m', 'requestsPerSecond': '0'}}"
check "kubectl top pod through member1's context shows 21m" \
  bash -c "kubectl --kubeconfig '$E2E_TMP/world/members.kubeconfig' --context member1 top pod --no-headers | grep -q ' 21m '"
check "the existing workload-load call still works (200)" test "$(ctl PUT "$workload/load" '{"cpu":"10m"}')" = 200
check "member2 now has the shared 10m alone, member1 keeps its own" \
  test "$(cpu_m member2),$(cpu_m member1)" = 11,21
check "unknown member is 404" test "$(ctl PUT "$workload/members/nope/load" '{"cpu":"1"}')" = 404
check "a bad field is 400" test "$(ctl PUT "$workload/members/member1/load" '{"memory":"1Gi"}')" = 400
check "DELETE returns member1 to the shared load (200)" test "$(ctl DELETE "$workload/members/member1/load")" = 200
check "both pods share the 10m again: 5m + 1m each" test "$(cpu_m member1),$(cpu_m member2)" = 6,6
finish

#!/usr/bin/env bash
# End to end, members from the Karmada control plane: `fedmetrics sim` runs
# the control plane and three members (test/e2e/karmada.world.yaml), and
# `fedmetrics serve --karmada-kubeconfig` finds the members from its Cluster
# objects, once reaching them directly (spec.apiEndpoint with the Secret in
# spec.secretRef) and once through the control plane's cluster proxy
# (--member-access=proxy). A member that refuses connections turns its
# Cluster NotReady: it must leave the member set within seconds (so it is not
# asked, and a Warning says it was left out and why) and come back when the
# fault is cleared.
# Usage: karmada_source_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

# -v: the simulated control plane logs every request it serves (which paths serve used).
start_sim "$src/test/e2e/karmada.world.yaml" -v
karmada_kubeconfig="$E2E_TMP/world/karmada.kubeconfig"
pods_path=/apis/metrics.k8s.io/v1beta1/namespaces/default/pods

# query: the pod metrics of namespace default; sets $members (the sorted
# source clusters of the items) and $warnings (kubectl's stderr).
query() {
  local out
  out=$(k get --raw "$pods_path" 2>"$E2E_TMP/stderr") || true
  warnings=$(cat "$E2E_TMP/stderr")
  members=$(json_get "${out:-{\}}" \
    "sorted(set(i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] for i in d.get('items', [])))" \
    2>/dev/null || echo "no answer")
}
# until_members EXPECTED SECONDS [WARNING]: queries until the items come from
# EXPECTED with no Warning at all, or with exactly the one WARNING; sets $took (seconds).
until_members() {
  local expected=$1 start=$SECONDS deadline=$((SECONDS + $2)) warning=${3:-}
  while [ $SECONDS -lt $deadline ]; do
    query
    if [ "$members" = "$expected" ] && { [ -z "$warning" ] && [ -z "$warnings" ] || [ "$warnings" = "Warning: $warning" ]; }; then
      took=$((SECONDS - start))
      return 0
    fi
    sleep 0.2
  done
  took=$((SECONDS - start))
  echo "after $2 s: items from $members, warnings: $warnings"
  return 1
}
faults() {  # faults METHOD MEMBER [BODY]
  curl -sk -o /dev/null -X "$1" "$control/sim/v1/members/$2/faults" -H 'Content-Type: application/json' ${3:+-d "$3"}
}

members_follow_readiness() {  # members_follow_readiness MODE LOG
  local mode=$1 log=$2
  check "$mode: the items come from member1 and member2 (member3 runs no nginx pod), with no Warning" \
    until_members "['member1', 'member2']" 5
  faults PUT member2 '{"refuse":true}'
  check "$mode: member2 refusing turns its Cluster NotReady, and within seconds it is no longer asked, but reported" \
    until_members "['member1']" 10 "member2: left out: Cluster NotReady (ClusterNotReachable)"
  check "$mode: ... which took at most 6 s (${took} s)" test "$took" -le 6
  check "$mode: the log says why member2 is left out" \
    grep -q 'cluster member2 is left out until it is Ready: Ready=False (ClusterNotReachable' "$log"
  check "$mode: and that it was removed" grep -q 'member member2: removed' "$log"
  faults DELETE member2
  check "$mode: member2 is back within seconds once the fault is cleared" until_members "['member1', 'member2']" 10
  check "$mode: the log says it was added again" grep -q 'member member2: added' "$log"
}

# Direct access: spec.apiEndpoint with the token and caBundle of karmada-cluster/<name>.
start_serve "$E2E_TMP/serve-direct.log" --karmada-kubeconfig "$karmada_kubeconfig" --member-timeout 1s
check "direct: serve found the three Ready clusters" \
  grep -q 'karmada: 3 member cluster(s) from the Cluster objects (direct access): member1, member2, member3' \
  "$E2E_TMP/serve-direct.log"
members_follow_readiness direct "$E2E_TMP/serve-direct.log"

# Credentials: a new token in member1's Secret replaces its client within seconds.
set_token() { kk patch secret -n karmada-cluster member1 --type merge -p "{\"data\":{\"token\":\"$(printf %s "$1" | base64 -w0)\"}}" >/dev/null; }
set_token nope
check "direct: a token rotated in member1's Secret is picked up within seconds" \
  wait_for_log "$E2E_TMP/serve-direct.log" 'member member1: changed' 5
query
check "direct: and used: member1 now answers 401, reported in a Warning" grep -q 'Warning: member1.*401' <<<"$warnings"
set_token admin-token
check "direct: member1 is served again with the token restored" until_members "['member1', 'member2']" 10

# A Cluster deleted and created again.
kk get clusters.cluster.karmada.io member1 -o json |
  /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); [d['metadata'].pop(k, None) for k in ('resourceVersion','uid','creationTimestamp')]; print(json.dumps(d))" \
  >"$E2E_TMP/member1.json"
kk delete clusters.cluster.karmada.io member1 >/dev/null
check "direct: a deleted Cluster leaves the member set within seconds" until_members "['member2']" 10
kk create -f "$E2E_TMP/member1.json" >/dev/null
check "direct: and comes back when it is created again" until_members "['member1', 'member2']" 10

check "direct: serve read each cluster's Secret from the control plane" \
  grep -q 'karmada GET /api/v1/namespaces/karmada-cluster/secrets/member1 -> 200' "$E2E_TMP/sim.log"
check "direct: and never used the cluster proxy" bash -c "! grep -q '/proxy/' '$E2E_TMP/sim.log'"

# spec.proxyURL: member1 reached through an HTTP CONNECT proxy (test/e2e/tools/connect_proxy.py), member2 not.
spawn "$E2E_TMP/proxy.out" /usr/bin/python3 "$src/test/e2e/tools/connect_proxy.py" "$E2E_TMP/proxy.requests"
wait_for_log "$E2E_TMP/proxy.out" "proxy listening on" 10
proxy_port=$(grep -o 'listening on [0-9]*' "$E2E_TMP/proxy.out" | sed 's/.* //')
member1_at=$(kk get clusters.cluster.karmada.io member1 -o jsonpath='{.spec.apiEndpoint}' | sed 's|^https://||')
member2_at=$(kk get clusters.cluster.karmada.io member2 -o jsonpath='{.spec.apiEndpoint}' | sed 's|^https://||')
changes() { grep -c 'member member1: changed' "$E2E_TMP/serve-direct.log" || true; }
changed_since() { [ "$(changes)" -gt "$1" ]; }
changes_before=$(changes)
kk patch clusters.cluster.karmada.io member1 --type merge -p "{\"spec\":{\"proxyURL\":\"http://127.0.0.1:$proxy_port\"}}" >/dev/null
check "direct: a proxyURL set on member1's Cluster is picked up within seconds" \
  wait_until 5 changed_since "$changes_before"
check "direct: member1 still answers, through the proxy" until_members "['member1', 'member2']" 10
check "direct: the proxy was asked to CONNECT member1 ($member1_at)" grep -qx "CONNECT $member1_at HTTP/1.1" "$E2E_TMP/proxy.requests"
check "direct: and nothing else (member2 at $member2_at is reached directly; TLS runs inside the tunnel)" \
  test "$(grep -cvx "CONNECT $member1_at HTTP/1.1" "$E2E_TMP/proxy.requests")" = 0

# Proxy access: every request goes through /apis/cluster.karmada.io/v1alpha1/clusters/{name}/proxy.
start_serve "$E2E_TMP/serve-proxy.log" --karmada-kubeconfig "$karmada_kubeconfig" --member-access proxy --member-timeout 1s
check "proxy: serve found the three Ready clusters" \
  grep -q 'karmada: 3 member cluster(s) from the Cluster objects (proxy access): member1, member2, member3' \
  "$E2E_TMP/serve-proxy.log"
members_follow_readiness proxy "$E2E_TMP/serve-proxy.log"
check "proxy: the members' metrics were read through the control plane's cluster proxy" \
  grep -q "karmada GET /apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy$pods_path -> 200" "$E2E_TMP/sim.log"

# The two member sources exclude each other, clearly.
both=$("$bin" serve --insecure-development-no-auth --karmada-kubeconfig "$karmada_kubeconfig" \
  --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" 2>&1 || true)
check "--karmada-kubeconfig with --member-kubeconfig is refused" grep -q 'excludes --karmada-kubeconfig' <<<"$both"
finish

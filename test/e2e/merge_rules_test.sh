#!/usr/bin/env bash
# End to end: every merge rule of the aggregated API and every fault mode of a
# member, through `fedmetrics serve` over the demo federation
# (examples/worlds/demo.yaml), checked with curl, the real kubectl and the
# members' own answers.
#
# The simulator never places one pod name in two members (the member is part
# of the name's hash), so to have the same objects in two members the member
# kubeconfig names member1 twice: contexts member1 and member1-mirror on one
# cluster, as an operator's file may well have. Everything member1 serves then
# comes from two members at the same moment.
# Usage: merge_rules_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/examples/worlds/demo.yaml"
members="$E2E_TMP/members.kubeconfig"
cp "$E2E_TMP/world/members.kubeconfig" "$members"
kubectl --kubeconfig "$members" config set-context member1-mirror --cluster=member1 --user=member1 >/dev/null
deadline_ms=1000
E2E_NAMESPACE=shop start_serve "$E2E_TMP/serve.log" --member-kubeconfig "$members" --member-timeout 1s

sim_put() { curl -sfk -X PUT "$control$1" -H 'Content-Type: application/json' -d "$2" >/dev/null; }
sim_delete() { curl -sfk -X DELETE "$control$1" >/dev/null; }
get() { curl -s --cacert "$ca" "$url$1"; }
code() { curl -s -o /dev/null -w '%{http_code}' --cacert "$ca" "$url$1"; }
# member GET PATH CONTEXT: straight to one simulated member, as its kubeconfig says.
member() { kubectl --kubeconfig "$E2E_TMP/world/members.kubeconfig" --context "$2" --request-timeout=10s get --raw "$1"; }
# Quantity text -> number (the suffixes the simulator writes).
quantity='lambda s: float(s[:-1]) / 1000 if s.endswith("m") else float(s[:-1]) * 1000 if s.endswith("k") else float(s)'
self_metric() { curl -s --cacert "$ca" "$url/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }

pods_path=/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods
# Every member's metrics discovered (custom and external metrics go only to
# the members that list them), and web's pods past their readiness delay.
discovered() {
  test "$(json_get "$(get /apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_messages_ready)" "len(d['items'])")" = 2 &&
    test "$(json_get "$(get "$pods_path")" "len(d['items'])")" -ge 7
}
wait_until 20 discovered || fail "the members' metrics were not all discovered within 20 s"

# --- pods and nodes: a union; the same object in two members is two items ---
pods=$(get "$pods_path")
m1=$(json_get "$pods" "sum(1 for i in d['items'] if i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] == 'member1')")
check "member1 serves pods of shop ($m1)" test "$m1" -ge 1
check "the union holds 7 pods plus member1's again from member1-mirror" \
  test "$(json_get "$pods" "len(d['items'])")" = $((7 + m1))
check "each of member1's pods is two items, one per member, side by side" \
  test "$(json_get "$pods" "all([c for n2, c in [(j['metadata']['name'], j['metadata']['annotations']['resource.karmada.io/query-from-cluster']) for j in d['items']] if n2 == i['metadata']['name']] == ['member1', 'member1-mirror'] for i in d['items'] if i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] == 'member1')")" = True
check "sorted by namespace, name, then member" \
  test "$(json_get "$pods" "[(i['metadata']['namespace'], i['metadata']['name'], i['metadata']['annotations']['resource.karmada.io/query-from-cluster']) for i in d['items']] == sorted((i['metadata']['namespace'], i['metadata']['name'], i['metadata']['annotations']['resource.karmada.io/query-from-cluster']) for i in d['items'])")" = True
pod1=$(json_get "$pods" "[i['metadata']['name'] for i in d['items'] if i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] == 'member1'][0]")
pod2=$(json_get "$pods" "[i['metadata']['name'] for i in d['items'] if i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] == 'member2'][0]")
all_pods=$(get /apis/metrics.k8s.io/v1beta1/pods)
check "the cluster-wide pod list is the same union" test "$(json_get "$all_pods" "len(d['items'])")" = $((7 + m1))

one=$(get "$pods_path/$pod2")
check "a pod by name that one member has: that member's PodMetrics" \
  test "$(json_get "$one" "d['kind'], d['metadata']['name'], d['metadata']['annotations']['resource.karmada.io/query-from-cluster']")" \
  = "PodMetrics $pod2 member2"
check "a pod by name that two members have: 409" test "$(code "$pods_path/$pod1")" = 409
conflict=$(get "$pods_path/$pod1")
check "a Conflict Status naming both members" \
  test "$(json_get "$conflict" "d['kind'], d['reason'], 'member1, member1-mirror' in d['message']")" = "Status Conflict True"
kconflict=$(k get --raw "$pods_path/$pod1" 2>&1 || true)
check "kubectl shows the Conflict" grep -q "Conflict" <<<"$kconflict"

nodes=$(get /apis/metrics.k8s.io/v1beta1/nodes)
check "nodes: the union, member1's two nodes twice (5 + 2)" test "$(json_get "$nodes" "len(d['items'])")" = 7
node2=$(json_get "$nodes" "[i['metadata']['name'] for i in d['items'] if i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] == 'member2'][0]")
check "a node by name that one member has: that NodeMetrics" \
  test "$(json_get "$(get "/apis/metrics.k8s.io/v1beta1/nodes/$node2")" "d['kind'], d['metadata']['name']")" = "NodeMetrics $node2"
check "a node by name that two members have: 409" test "$(code /apis/metrics.k8s.io/v1beta1/nodes/member1-node-1)" = 409
check "a node no member has: 404" test "$(code /apis/metrics.k8s.io/v1beta1/nodes/no-such-node)" = 404

# --- the reserved label key fedmetrics/cluster chooses the members ---
top1=$(k top pod -n shop -l fedmetrics/cluster=member1 --no-headers)
check "kubectl top pod -l fedmetrics/cluster=member1: member1's pods only ($m1)" test "$(wc -l <<<"$top1")" -eq "$m1"
typo=$(k top pod -n shop -l fedmetrics/cluster=membr1 2>&1 || true)
check "a fedmetrics/cluster naming no member: kubectl shows the Warning, not just an empty list" \
  grep -q "Warning: fedmetrics/cluster: no member cluster is named 'membr1'" <<<"$typo"
mirror=$(get "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods?labelSelector=fedmetrics%2Fcluster%20in%20%28member1-mirror%29")
check "labelSelector 'fedmetrics/cluster in (member1-mirror)' asks the mirror only" \
  test "$(json_get "$mirror" "sorted(set(i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] for i in d['items']))")" = "['member1-mirror']"

# --- custom metrics: per-pod items never summed; other objects summed ---
custom=/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop
per_pod=$(get "$custom/pods/*/http_requests")
member_pods=$(member "$custom/pods/*/http_requests" member1)
web1=$(json_get "$member_pods" "d['items'][0]['describedObject']['name']")
member2_pods=$(member "/apis/custom.metrics.k8s.io/v1beta1/namespaces/shop/pods/*/http_requests" member2)
check "pods/*: one item per pod and member (member1's twice, member2's once)" \
  test "$(json_get "$per_pod" "len(d['items'])")" \
  = $(( $(json_get "$member_pods" "len(d['items'])") * 2 + $(json_get "$member2_pods" "len(d['items'])") ))
check "pods/*: $web1 is two items with member1's own value, not their sum" \
  test "$(json_get "$per_pod" "[i['value'] for i in d['items'] if i['describedObject']['name'] == '$web1']")" \
  = "$(json_get "$member_pods" "[i['value'] for i in d['items'] if i['describedObject']['name'] == '$web1'] * 2")"

# A Deployment and a namespace in several members: one item, the sum of the
# members' values (member1 counted twice: it is two members here).
summed() { # PATH_AFTER_NAMESPACE: fedmetrics' value == 2 x member1's + member2's
  local merged v1 v2
  merged=$(get "$custom/$1")
  v1=$(member "$custom/$1" member1)
  v2=$(member "/apis/custom.metrics.k8s.io/v1beta1/namespaces/shop/$1" member2)
  /usr/bin/python3 - "$merged" "$v1" "$v2" <<PY
import json, sys
q = $quantity
merged, v1, v2 = (json.loads(a) for a in sys.argv[1:])
value = lambda doc: q(doc["items"][0]["value"])
ok = len(merged["items"]) == 1 and abs(value(merged) - (2 * value(v1) + value(v2))) < 0.002
print(merged["items"][0]["value"], "vs", v1["items"][0]["value"], "x2 +", v2["items"][0]["value"], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}
check "deployments.apps/web/http_requests: one item, summed over the members" summed deployments.apps/web/http_requests
check "namespaces/shop/metrics/http_requests: one item, summed over the members" summed metrics/http_requests
check "summed items keep their kind and name" \
  test "$(json_get "$(get "$custom/deployments.apps/web/http_requests")" "d['items'][0]['describedObject']['kind'], d['items'][0]['describedObject']['name']")" \
  = "Deployment web"

# --- external metrics: every member's series, tagged ---
external=/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_messages_ready
check "external: one series per member that has it, tagged fedmetrics/cluster" \
  test "$(json_get "$(get "$external")" "sorted(i['metricLabels']['fedmetrics/cluster'] for i in d['items'])")" \
  = "['member1', 'member1-mirror']"
# (On the external API labelSelector selects series: docs/api.md, "Paths".)
check "labelSelector fedmetrics/cluster=member1-mirror: that member's series only" \
  test "$(json_get "$(get "$external?labelSelector=fedmetrics%2Fcluster%3Dmember1-mirror")" "[i['metricLabels']['fedmetrics/cluster'] for i in d['items']]")" \
  = "['member1-mirror']"
check "custom metrics: metricLabelSelector fedmetrics/cluster=member2 asks member2 only" \
  test "$(json_get "$(get "$custom/pods/*/http_requests?metricLabelSelector=fedmetrics%2Fcluster%3Dmember2")" "len(d['items'])")" \
  = "$(json_get "$member2_pods" "len(d['items'])")"

# --- identical queries in flight at once share one fan-out ---
sim_put /sim/v1/members/member3/faults '{"latency":"300ms"}'
coalesced_before=$(self_metric fedmetrics_aggregator_coalesced_total)
fanouts_before=$(self_metric fedmetrics_aggregator_fanouts_total)
cpids=()
for i in 1 2 3 4 5 6; do
  spawn "$E2E_TMP/same.$i.log" curl -s -o "$E2E_TMP/same.$i" --cacert "$ca" "$url/apis/metrics.k8s.io/v1beta1/nodes"
  cpids+=("$spawned")
done
for p in "${cpids[@]}"; do reap "$p"; done
sim_delete /sim/v1/members/member3/faults
coalesced=$(( $(self_metric fedmetrics_aggregator_coalesced_total) - coalesced_before ))
fanouts=$(( $(self_metric fedmetrics_aggregator_fanouts_total) - fanouts_before ))
check "six identical queries in flight together: coalesced ($coalesced joined, $fanouts fan-outs)" \
  bash -c "[ $coalesced -ge 1 ] && [ $((coalesced + fanouts)) -ge 6 ] && [ $fanouts -lt 6 ]"
check "and every one got the whole answer" \
  test "$(cat "$E2E_TMP"/same.* | grep -o '"kind":"NodeMetricsList"' | wc -l)" = 6

# --- each fault of a member: the others' answer within the deadline + 100 ms, with a Warning ---
m3=$(json_get "$pods" "sum(1 for i in d['items'] if i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] == 'member3')")
healthy() { ! curl -s -D - -o /dev/null --cacert "$ca" "$url$pods_path" | grep -qi '^warning:'; }
fault_case() { # FAULT_JSON WARNING_PATTERN
  local out took status items
  sim_put /sim/v1/members/member3/faults "$1"
  out=$(curl -s -D "$E2E_TMP/fault.headers" -o "$E2E_TMP/fault.body" -w '%{http_code} %{time_total}' --cacert "$ca" \
    "$url$pods_path")
  sim_delete /sim/v1/members/member3/faults
  status=${out% *}
  took=$(awk -v t="${out#* }" 'BEGIN { printf "%d", t * 1000 }')
  items=$(json_get "$(cat "$E2E_TMP/fault.body")" "len(d.get('items', []))")
  check "$1: 200 with the other members' pods ($items)" \
    bash -c "[ '$status' = 200 ] && [ '$items' = $((7 + m1 - m3)) ]"
  check "$1: Warning: 299 naming member3 and why ($2)" \
    grep -q "^[Ww]arning: 299 - \"member3: $2" "$E2E_TMP/fault.headers"
  check "$1: within the member deadline + 100 ms (${took} ms)" test "$took" -le $((deadline_ms + 100))
  wait_until 15 healthy || fail "member3 did not recover after $1"
}
# While a member holds a request, the in-flight gauges say so.
sim_put /sim/v1/members/member3/faults '{"blackhole":true}'
spawn "$E2E_TMP/held.log" curl -s -o /dev/null --cacert "$ca" "$url/apis/metrics.k8s.io/v1beta1/nodes"
held=$spawned
sleep 0.4
gauges=$(curl -s --cacert "$ca" "$url/metrics")
reap "$held"
sim_delete /sim/v1/members/member3/faults
check "/metrics: member3's request in flight while it holds it" \
  test "$(awk '$1 == "fedmetrics_member_client_in_flight{cluster=\"member3\"}" { print $2 }' <<<"$gauges")" -ge 1
# (The /metrics request counts itself: 1 would be it alone.)
check "/metrics: two requests in flight meanwhile, the held one and /metrics itself" \
  test "$(awk '$1 == "fedmetrics_apiserver_requests_in_flight" { print $2 }' <<<"$gauges")" -ge 2
wait_until 15 healthy || fail "member3 did not recover after the black hole"

fault_case '{"latency":"3s"}' "timeout"
fault_case '{"errorRate":1}' "HTTP 500: Internal error occurred: simulated fault\""
fault_case '{"blackhole":true}' "timeout"
fault_case '{"refuse":true}' "refused"
fault_case '{"malformedJson":true}' "malformed_response"
fault_case '{"malformedGzip":true}' "malformed_response"
fault_case '{"wrongCertificate":true}' "tls"
fault_case '{"expiredToken":true}' "HTTP 401"
check "each failure is logged with the member and the reason" \
  bash -c "grep 'member3' '$E2E_TMP/serve.log' | grep -q 'timeout' && grep 'member3' '$E2E_TMP/serve.log' | grep -q 'tls'"
member3_errors=$(self_metric 'fedmetrics_member_errors_total{cluster="member3"}')
check "/metrics counts member3's errors (${member3_errors:-none})" test "${member3_errors:-0}" -ge 8

# --- a member that accepts connections and never answers fails fast ---
# Its first queries wait for --member-timeout; after three unanswered requests
# in a row it is left out of every answer at once, with a Warning saying
# since when, and probed in the background; its first answer brings it back.
timed_pods() { # HEADERS_FILE: "STATUS MILLISECONDS ITEMS" of one pods query
  local out
  out=$(curl -s -D "$1" -o "$E2E_TMP/ff.body" -w '%{http_code} %{time_total}' --cacert "$ca" "$url$pods_path")
  echo "${out% *} $(awk -v t="${out#* }" 'BEGIN { printf "%d", t * 1000 }') $(json_get "$(cat "$E2E_TMP/ff.body")" "len(d.get('items', []))")"
}
left_out_gauge() { curl -s --cacert "$ca" "$url/metrics" | awk '$1 == "fedmetrics_member_left_out{cluster=\"member3\"}" { print $2 }'; }
sim_put /sim/v1/members/member3/faults '{"blackhole":true}'
for i in 1 2 3; do
  read -r status took items < <(timed_pods "$E2E_TMP/ff.$i.headers")
  check "member3 black-holed, query $i: the others' pods ($items), no later than the member deadline + 100 ms (${took} ms)" \
    bash -c "[ '$status' = 200 ] && [ '$items' = $((7 + m1 - m3)) ] && [ $took -le $((deadline_ms + 100)) ]"
  check "query $i: Warning: member3 timed out" grep -q '^[Ww]arning: 299 - "member3: timeout' "$E2E_TMP/ff.$i.headers"
done
read -r status took items < <(timed_pods "$E2E_TMP/ff.4.headers")
check "query 4: the others' pods ($items) at once, without waiting for member3 (${took} ms)" \
  bash -c "[ '$status' = 200 ] && [ '$items' = $((7 + m1 - m3)) ] && [ $took -lt $((deadline_ms / 2)) ]"
check "query 4: Warning: member3 left out, not answering since when, after how many timeouts" \
  grep -Eq '^[Ww]arning: 299 - "member3: left out: not answering since [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z \(3 timeouts\)"' \
  "$E2E_TMP/ff.4.headers"
check "/metrics: fedmetrics_member_left_out{cluster=\"member3\"} 1 while it is left out" test "$(left_out_gauge)" = 1
check "the serve log says member3 is left out and probed" \
  grep -q 'member member3: left out of every answer: not answering since .*probing it in the background' "$E2E_TMP/serve.log"
sim_delete /sim/v1/members/member3/faults
member3_back() {
  read -r status took items < <(timed_pods "$E2E_TMP/ff.back.headers")
  [ "$status" = 200 ] && [ "$items" = $((7 + m1)) ] && ! grep -qi '^warning:' "$E2E_TMP/ff.back.headers"
}
check "member3 answering again: a probe finds it, it is asked again and the Warning goes" wait_until 20 member3_back
check "the serve log says member3 answers again" grep -q 'member member3: answers again; asked again' "$E2E_TMP/serve.log"
check "/metrics: member3 no longer left out" test -z "$(left_out_gauge)"

# --- --cache-ttl: a repeated query inside the window is answered from the cache ---
check "without --cache-ttl nothing is served from a cache" test "$(self_metric fedmetrics_aggregator_cache_hits_total)" = 0
E2E_NAMESPACE=shop start_serve "$E2E_TMP/serve-cached.log" --member-kubeconfig "$members" --member-timeout 1s \
  --cache-ttl 30s --cache-max-entries 64
wait_until 10 healthy || true
first=$(get "$pods_path")
hits_before=$(self_metric fedmetrics_aggregator_cache_hits_total)
fanouts_before=$(self_metric fedmetrics_aggregator_fanouts_total)
second=$(get "$pods_path")
check "--cache-ttl 30s: the repeated query is a cache hit, with no new fan-out" \
  bash -c "[ $(( $(self_metric fedmetrics_aggregator_cache_hits_total) - hits_before )) -eq 1 ] &&
           [ $(self_metric fedmetrics_aggregator_fanouts_total) -eq $fanouts_before ]"
check "and the same answer" test "$first" = "$second"

# --- hostile input: '..' names and oversized selectors are 400s, and no member is asked ---
fanouts_before=$(self_metric fedmetrics_aggregator_fanouts_total)
dots=$(curl -s --path-as-is -o /dev/null -w '%{http_code}' --cacert "$ca" "$url/apis/metrics.k8s.io/v1beta1/namespaces/../pods")
check "namespaces/../pods is a 400 (${dots})" test "$dots" = 400
many=$(python3 -c 'print("%2C".join("k%d%%3Dv" % i for i in range(1001)))')
check "a labelSelector of 1,001 requirements is a 400 naming the limit" \
  bash -c "curl -s --cacert '$ca' '$url/apis/metrics.k8s.io/v1beta1/pods?labelSelector=$many' | grep -q 'the limit is 1000'"
check "and neither fanned out" test "$(self_metric fedmetrics_aggregator_fanouts_total)" = "$fanouts_before"

# --- a member unreachable when fedmetrics starts: its custom metrics are missed out loud ---
# Custom metrics go only to the members whose discovery lists them; a member
# never discovered is not asked, and the answer says so until it is.
sim_put /sim/v1/members/member2/faults '{"refuse":true}'
E2E_NAMESPACE=shop start_serve "$E2E_TMP/serve-late.log" --member-kubeconfig "$members" --member-timeout 1s
curl -s -D "$E2E_TMP/late.headers" -o "$E2E_TMP/late.body" --cacert "$ca" "$url$custom/pods/*/http_requests"
check "member2 undiscovered: the custom metrics answer warns that it was left out" \
  grep -q '^[Ww]arning: 299 - "member2: left out: its metrics discovery has not succeeded yet' "$E2E_TMP/late.headers"
check "and holds the discovered members' items" \
  test "$(json_get "$(cat "$E2E_TMP/late.body")" "len(d['items'])")" = $(( $(json_get "$member_pods" "len(d['items'])") * 2 ))
sim_delete /sim/v1/members/member2/faults
member2_back() {
  curl -s -D "$E2E_TMP/late.headers" -o "$E2E_TMP/late.body" --cacert "$ca" "$url$custom/pods/*/http_requests" &&
    ! grep -qi '^warning:' "$E2E_TMP/late.headers"
}
check "once member2 is reachable, discovery retries and the warning goes" wait_until 15 member2_back
finish

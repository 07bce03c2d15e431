#!/usr/bin/env bash
# End to end across the federation: `fedmetrics sim` runs three simulated
# member clusters (examples/worlds/demo.yaml), `fedmetrics serve` aggregates
# them, and the real kubectl and Python client query it over TLS on loopback.
# Usage: federation_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/examples/worlds/demo.yaml"

E2E_NAMESPACE=shop start_serve "$E2E_TMP/serve.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" --member-timeout 1s
sim_put() { curl -sk -X PUT "$control$1" -H 'Content-Type: application/json' -d "$2" >/dev/null; }

# metrics.k8s.io: the union over the members, with the source annotation, sorted.
pods=$(k get --raw /apis/metrics.k8s.io/v1beta1/namespaces/shop/pods)
check "pod metrics from all three members (7 pods of web and api)" \
  test "$(json_get "$pods" "len(d['items'])")" = 7
check "every item names its member in resource.karmada.io/query-from-cluster" \
  test "$(json_get "$pods" "sorted(set(i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] for i in d['items']))")" \
  = "['member1', 'member2', 'member3']"
check "items sorted by namespace, name, cluster" \
  test "$(json_get "$pods" "[(i['metadata']['namespace'], i['metadata']['name']) for i in d['items']] == sorted((i['metadata']['namespace'], i['metadata']['name']) for i in d['items'])")" = True
check "items carry the pods' labels" test "$(json_get "$pods" "all('app' in i['metadata']['labels'] for i in d['items'])")" = True
top=$(k top pod -n shop --no-headers)
check "kubectl top pod lists the merged pods" test "$(wc -l <<<"$top")" -eq 7
nodes=$(k get --raw /apis/metrics.k8s.io/v1beta1/nodes)
check "node metrics of every member's nodes (5)" test "$(json_get "$nodes" "len(d['items'])")" = 5
only1=$(k get --raw "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods?labelSelector=fedmetrics%2Fcluster%3Dmember1")
check "labelSelector fedmetrics/cluster=member1 asks member1 only" \
  test "$(json_get "$only1" "sorted(set(i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] for i in d['items']))")" = "['member1']"
web=$(k top pod -n shop -l 'app=web,fedmetrics/cluster!=member3' --no-headers | wc -l)
check "kubectl top pod -l app=web,fedmetrics/cluster!=member3 (3 pods)" test "$web" -eq 3

# custom.metrics.k8s.io: per-pod http_requests from the members that serve it (member1 v1beta2, member2 v1beta1).
custom=$(k get --raw '/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/http_requests?labelSelector=app%3Dweb')
check "custom metrics for web pods from member1 and member2 (3 pods)" test "$(json_get "$custom" "len(d['items'])")" = 3
check "custom metrics in v1beta2 shape" test "$(json_get "$custom" "d['items'][0]['metric']['name']")" = http_requests
custom1=$(k get --raw '/apis/custom.metrics.k8s.io/v1beta1/namespaces/shop/pods/%2A/http_requests')
check "and in v1beta1 shape" test "$(json_get "$custom1" "d['items'][0]['metricName']")" = http_requests
discovery=$(k get --raw /apis/custom.metrics.k8s.io/v1beta2)
check "custom metrics discovery is the union of the members'" \
  test "$(json_get "$discovery" "'pods/http_requests' in [r['name'] for r in d['resources']]")" = True
missing=$(k get --raw '/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/no_such_metric' 2>&1 || true)
check "an unknown metric is 404 with the custom-metrics wording" \
  grep -q "NotFound.*could not find the metric no_such_metric for pods" <<<"$missing"
external=$(k get --raw '/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_messages_ready')
check "external metric series tagged with fedmetrics/cluster" \
  test "$(json_get "$external" "sorted(i['metricLabels']['fedmetrics/cluster'] for i in d['items'])")" = "['member1']"

# The official Python client.
py=$(/usr/bin/python3 - "$E2E_TMP/kubeconfig" <<'PY'
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
api = client.CustomObjectsApi()
pods = api.list_namespaced_custom_object("metrics.k8s.io", "v1beta1", "shop", "pods")
print(len(pods["items"]))
PY
)
check "python3-kubernetes lists the merged pod metrics" test "$py" = 7

selfmetrics=$(curl -s --cacert "$ca" "$url/metrics")
check "/metrics: per-member client requests by outcome" \
  grep -q 'fedmetrics_member_client_requests_total{cluster="member1",outcome="success"}' <<<"$selfmetrics"
check "/metrics: per-member latency histogram up to 60 s" \
  grep -q 'fedmetrics_member_client_request_duration_seconds_bucket{cluster="member2",le="60"}' <<<"$selfmetrics"
check "/metrics: aggregator fan-outs" grep -q '^fedmetrics_aggregator_fanouts_total [1-9]' <<<"$selfmetrics"
check "/metrics: every member's health probe passed" \
  test "$(grep -c '^fedmetrics_member_healthy{cluster="member[123]"} 1$' <<<"$selfmetrics")" = 3

# Partial failure is visible: member2 failing every request, member3 a black hole.
sim_put /sim/v1/members/member2/faults '{"errorRate":1}'
sim_put /sim/v1/members/member3/faults '{"blackhole":true}'
start=$(date +%s%N)
partial=$(k top pod -n shop --no-headers 2>&1)
took=$(( ($(date +%s%N) - start) / 1000000 ))
check "with member2 failing and member3 black-holed, member1's pods are served" \
  test "$(grep -c '^[a-z]' <<<"$(grep -v Warning <<<"$partial")")" -eq 4
check "and a Warning names member2" grep -q 'Warning: member2' <<<"$partial"
check "and one names member3" grep -q 'Warning: member3' <<<"$partial"
check "the answer came within the member deadline plus slack (${took} ms)" test "$took" -lt 2500
sim_put /sim/v1/members/member1/faults '{"refuse":true}'
all_down=$(k get --raw /apis/metrics.k8s.io/v1beta1/namespaces/shop/pods 2>&1 || true)
check "all members failing is a 503" grep -q "ServiceUnavailable" <<<"$all_down"
check "/metrics: member errors counted by cluster" \
  grep -q 'fedmetrics_member_errors_total{cluster="member2"} [1-9]' <(curl -s --cacert "$ca" "$url/metrics")
finish

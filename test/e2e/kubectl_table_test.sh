#!/usr/bin/env bash
# What operators see: stock `kubectl get podmetrics` / `nodemetrics` through
# the control plane's aggregation layer ask fedmetrics for a meta.k8s.io
# Table (Accept: application/json;as=Table;v=v1;g=meta.k8s.io,...) and print
# metrics-server's columns plus CLUSTER, each row's member. `kubectl
# api-resources` succeeds while no member serves custom metrics. An Accept that
# admits nothing fedmetrics writes (protobuf alone) is a 406 NotAcceptable;
# kubectl top's and the HPA controller's Accept headers still get JSON.
# Usage: kubectl_table_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

aggregated_world
# No member serves custom metrics (only metrics-server's and external metrics).
sed -i 's/^    nodes: 1$/    nodes: 1\n    metricsApis: [metrics.k8s.io\/v1beta1, external.metrics.k8s.io\/v1beta1]/' "$E2E_TMP/world.yaml"
start_sim "$E2E_TMP/world.yaml"
# Before fedmetrics runs, its group-versions cannot be discovered: the
# aggregated discovery lists them as Stale, which kubectl leaves out.
check "while fedmetrics is down, kubectl api-versions leaves metrics.k8s.io/v1beta1 out" \
  test "$(kk api-versions | grep -c '^metrics.k8s.io/v1beta1$' || true)" = 0
start_aggregated_serve 2s
check "the metrics APIService becomes Available" \
  kk wait --for=condition=Available --timeout=15s apiservice/v1beta1.metrics.k8s.io 2>/dev/null
for v in v1beta2 v1beta1; do
  check "the custom metrics APIService $v is Available too" \
    kk wait --for=condition=Available --timeout=15s apiservice/$v.custom.metrics.k8s.io 2>/dev/null
done

# Discovery while no member serves custom metrics: fedmetrics answers an empty
# resource list for custom.metrics.k8s.io (what exists), and kubectl's
# aggregated discovery takes the group-versions as having no resources.
check "custom.metrics.k8s.io/v1beta1 lists no resources" \
  test "$(kk get --raw /apis/custom.metrics.k8s.io/v1beta1 | json_get "$(cat)" "d['resources']")" = "[]"
api_resources_status=0
api_resources=$(kk api-resources 2>"$E2E_TMP/api-resources.err") || api_resources_status=$?
check "kubectl api-resources exits 0 ($(tr '\n' ' ' <"$E2E_TMP/api-resources.err"))" test "$api_resources_status" = 0
check "and lists the resource metrics" grep -Eq '^pods +metrics.k8s.io/v1beta1 +true +PodMetrics$' <<<"$api_resources"
check "and the control plane's own resources" \
  grep -Eq '^federatedhpas +fhpa +autoscaling.karmada.io/v1alpha1 +true +FederatedHPA$' <<<"$api_resources"
check "and no custom metric" test "$(grep -c 'custom.metrics.k8s.io' <<<"$api_resources" || true)" = 0
check "kubectl api-versions lists metrics.k8s.io/v1beta1 and both custom metrics versions" \
  test "$(kk api-versions | grep -c '^metrics.k8s.io/v1beta1$\|^custom.metrics.k8s.io/v1beta[12]$')" = 3
aggregated=$(curl -sk -H 'Authorization: Bearer admin-token' \
  -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' "$karmada/apis")
check "the control plane's aggregated discovery: custom.metrics.k8s.io v1beta2 and v1beta1, Current, no resources" \
  test "$(json_get "$aggregated" "[(v['version'], v['freshness'], v['resources']) for g in d['items'] if g['metadata']['name'] == 'custom.metrics.k8s.io' for v in g['versions']]")" \
  = "[('v1beta2', 'Current', []), ('v1beta1', 'Current', [])]"

# kubectl get podmetrics -A: the Table's columns, NAMESPACE from each row's
# PartialObjectMetadata, CLUSTER from the member annotation.
pods=$(kk get podmetrics -A 2>&1 || true)
echo "$pods" | sed 's/^/    /'
check "kubectl get podmetrics -A prints NAMESPACE NAME CPU MEMORY WINDOW CLUSTER" \
  grep -Eq '^NAMESPACE +NAME +CPU +MEMORY +WINDOW +CLUSTER$' <<<"$pods"
check "one row per nginx pod, each naming its member (member1 and member2)" \
  test "$(awk '$2 ~ /^nginx-/ {print $6}' <<<"$pods" | sort | tr '\n' ' ')" = "member1 member2 "
check "the cells are metrics-server's: a Quantity, a Quantity, a Go duration" \
  test "$(awk '$2 ~ /^nginx-/ && $3 ~ /^[0-9]+m?$/ && $4 ~ /^[0-9]+(Ki|Mi|Gi|k|M|G)?$/ && $5 ~ /^[0-9hms.]+s$/' <<<"$pods" | wc -l)" -eq 2

# The same rows as the JSON list says: names, and each pod's member.
raw=$(kk get --raw /apis/metrics.k8s.io/v1beta1/pods)
expected=$(json_get "$raw" "' '.join(sorted(i['metadata']['name'] + '=' + i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] for i in d['items']))")
check "each row's CLUSTER is the member the JSON list names for that pod" \
  test "$(awk '$2 ~ /^nginx-/ {print $2 "=" $6}' <<<"$pods" | sort | tr '\n' ' ' | sed 's/ $//')" = "$expected"

nodes=$(kk get nodemetrics 2>&1 || true)
echo "$nodes" | sed 's/^/    /'
check "kubectl get nodemetrics prints NAME CPU MEMORY WINDOW CLUSTER" \
  grep -Eq '^NAME +CPU +MEMORY +WINDOW +CLUSTER$' <<<"$nodes"
check "every member's node on a row of its own member" \
  test "$(awk '$1 ~ /^member[123]-node-/ {split($1, m, "-"); if (m[1] == $5) n++} END {print n}' <<<"$nodes")" = 3

# A get by name: a Table of one row.
pod=$(json_get "$raw" "d['items'][0]['metadata']['name']")
member=$(json_get "$raw" "d['items'][0]['metadata']['annotations']['resource.karmada.io/query-from-cluster']")
one=$(kk get podmetrics -n default "$pod" --no-headers 2>&1 || true)
check "kubectl get podmetrics NAME: one row, its member ($one)" \
  test "$(awk '{print $1, $5}' <<<"$one")" = "$pod $member"
node=$(kk get nodemetrics member2-node-1 --no-headers 2>&1 || true)
check "kubectl get nodemetrics NAME: one row, member2 ($node)" test "$(awk '{print $1, $5}' <<<"$node")" = "member2-node-1 member2"

# includeObject: kubectl asks for the whole objects to sort (Object), reads
# labels from the default PartialObjectMetadata (Metadata).
sorted=$(kk get podmetrics -n default --sort-by='{.metadata.name}' --no-headers 2>&1 || true)
check "--sort-by (includeObject=Object) sorts the rows by name" \
  test "$(awk '{print $1}' <<<"$sorted" | tr '\n' ' ')" = "$(awk '{print $1}' <<<"$sorted" | sort | tr '\n' ' ')"
check "--sort-by rows still carry CLUSTER" test "$(awk '{print $5}' <<<"$sorted" | sort | tr '\n' ' ')" = "member1 member2 "
labels=$(kk get podmetrics -n default --show-labels --no-headers 2>&1 || true)
check "--show-labels reads the labels from each row's PartialObjectMetadata" \
  test "$(grep -c 'app=nginx' <<<"$labels")" -eq 2
table=$(curl -sk -H 'Authorization: Bearer admin-token' -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' \
    "$karmada/apis/metrics.k8s.io/v1beta1/nodes?includeObject=None")
check "includeObject=None: the rows carry no object" \
  test "$(json_get "$table" "d['kind'], [r['object'] for r in d['rows']]")" = "Table [None, None, None]"
check "-o json is still the list" test "$(kk get podmetrics -n default -o json | json_get "$(cat)" "d['kind']")" = List

# Content negotiation through the aggregation layer, with curl.
accept_code() {  # accept_code ACCEPT -> HTTP code of the pods list through the control plane
  curl -sk -o "$E2E_TMP/accept.out" -w '%{http_code}' -H 'Authorization: Bearer admin-token' -H "Accept: $1" \
    "$karmada/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"
}
check "protobuf alone: 406" test "$(accept_code 'application/vnd.kubernetes.protobuf')" = 406
check "the 406 is a Status NotAcceptable naming application/json" \
  test "$(json_get "$(cat "$E2E_TMP/accept.out")" "d['kind'], d['reason'], d['message']")" \
  = "Status NotAcceptable only the following media types are accepted: application/json"
check "kubectl top's Accept (protobuf, */*): the JSON list" \
  test "$(accept_code 'application/vnd.kubernetes.protobuf, */*') $(json_get "$(cat "$E2E_TMP/accept.out")" "d['kind']")" = "200 PodMetricsList"
check "the HPA controller's Accept (protobuf,application/json): the JSON list" \
  test "$(accept_code 'application/vnd.kubernetes.protobuf,application/json') $(json_get "$(cat "$E2E_TMP/accept.out")" "d['kind']")" = "200 PodMetricsList"
top=$(kk top pod -n default --no-headers)
check "kubectl top pod still works" test "$(grep -c '^nginx-' <<<"$top")" -eq 2
finish

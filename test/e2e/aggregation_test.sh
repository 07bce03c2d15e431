#!/usr/bin/env bash
# End to end through the aggregation layer, as in a Karmada installation:
# deploy/base/apiservice.yaml is applied to the simulated control plane, which then
# forwards the metrics groups to `fedmetrics serve` with its front-proxy
# client certificate and X-Remote-User/X-Remote-Group; fedmetrics trusts
# those only from that certificate (read from the control plane's
# extension-apiserver-authentication ConfigMap), reviews bearer tokens with
# TokenReview and authorizes with SubjectAccessReview against the control
# plane, then fans out to the members.
# Usage: aggregation_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/test/e2e/karmada.world.yaml"
karmada_kubeconfig="$E2E_TMP/world/karmada.kubeconfig"

# fedmetrics as a delegating API server: no --insecure-development-no-auth.
spawn "$E2E_TMP/serve.log" "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs" \
  --service-name fedmetrics --service-namespace fedmetrics-system \
  --authentication-kubeconfig "$karmada_kubeconfig" --authorization-kubeconfig "$karmada_kubeconfig" \
  --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" --member-timeout 1s
wait_for_log "$E2E_TMP/serve.log" "serving on https://127.0.0.1:" 10
port=$(grep -o 'https://127.0.0.1:[0-9]*' "$E2E_TMP/serve.log" | head -1 | sed 's/.*://')
check "serve read the front-proxy CA from extension-apiserver-authentication" \
  grep -q 'authentication: front proxy: yes' "$E2E_TMP/serve.log"

# Register it: the shipped manifests, with fedmetrics' CA as caBundle
# (instead of the base's unverified TLS) and the port filled in, and the Service made an ExternalName to loopback as Karmada does.
bundle=$(base64 -w0 "$E2E_TMP/certs/apiserver.crt")
sed -e "s/insecureSkipTLSVerify: true/caBundle: $bundle/" -e "s/port: 443}/port: $port}/" "$src/deploy/base/apiservice.yaml" >"$E2E_TMP/apiservice.yaml"
kk create namespace fedmetrics-system >/dev/null
check "kubectl apply -f deploy/base/apiservice.yaml" kk apply -f "$E2E_TMP/apiservice.yaml"
kk patch service fedmetrics -n fedmetrics-system --type merge \
  -p '{"spec":{"type":"ExternalName","externalName":"127.0.0.1"}}' >/dev/null
check "the availability check passes (kubectl wait --for=condition=Available)" \
  kk wait --for=condition=Available --timeout=10s apiservice/v1beta1.metrics.k8s.io apiservice/v1beta2.custom.metrics.k8s.io
check "kubectl get apiservices shows them Available" \
  test "$(kk get apiservices --no-headers | grep -c 'fedmetrics-system/fedmetrics *True')" = 4
check "the control plane's discovery lists metrics.k8s.io" grep -q 'metrics.k8s.io/v1beta1' <<<"$(kk api-versions)"

# Through the control plane: kubectl top and get --raw, as an admin and as a viewer.
top=$(kk top pod -n default --no-headers)
check "kubectl top pod through the control plane shows both members' nginx pods" test "$(grep -c '^nginx-' <<<"$top")" -eq 2
# (The control plane has no Node objects, so kubectl prints <unknown> for the percentages.)
nodes_top=$(kk top node --no-headers 2>&1 || true)
check "kubectl top node through the control plane shows every member's nodes" \
  test "$(grep -c '^member[123]-node-' <<<"$nodes_top")" -eq 3
raw=$(kk get --raw /apis/metrics.k8s.io/v1beta1/namespaces/default/pods)
check "every item names its member" \
  test "$(json_get "$raw" "sorted(i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] for i in d['items'])")" = "['member1', 'member2']"
check "the viewer through the control plane sees them too" \
  test "$(kubectl --kubeconfig "$karmada_kubeconfig" --token viewer-token top pod -n default --no-headers | wc -l)" -eq 2
# The other path forms, through the control plane too.
pod=$(json_get "$raw" "d['items'][0]['metadata']['name']")
check "a pod by name through the control plane" \
  test "$(json_get "$(kk get --raw "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/$pod")" "d['kind'], d['metadata']['name']")" \
  = "PodMetrics $pod"
check "pods of all namespaces through the control plane" \
  test "$(json_get "$(kk get --raw /apis/metrics.k8s.io/v1beta1/pods)" "len(d['items'])")" = 2
check "nodes and a node by name through the control plane" \
  test "$(json_get "$(kk get --raw /apis/metrics.k8s.io/v1beta1/nodes)" "len(d['items'])") $(json_get "$(kk get --raw /apis/metrics.k8s.io/v1beta1/nodes/member2-node-1)" "d['metadata']['name']")" \
  = "3 member2-node-1"
check "a labelSelector on fedmetrics/cluster through the control plane" \
  test "$(json_get "$(kk get --raw '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=fedmetrics%2Fcluster%3Dmember2')" "[i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] for i in d['items']]")" \
  = "['member2']"
check "external.metrics.k8s.io discovery through the control plane" \
  test "$(json_get "$(kk get --raw /apis/external.metrics.k8s.io/v1beta1)" "d['groupVersion']")" = external.metrics.k8s.io/v1beta1
missing_node=$(kk get --raw /apis/metrics.k8s.io/v1beta1/nodes/no-such-node 2>&1 || true)
check "a node no member has: NotFound through the control plane" grep -q 'NotFound' <<<"$missing_node"
custom=$(kk get --raw '/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/cpu_usage' 2>&1 || true)
check "custom metrics are forwarded too (404 NotFound with the custom-metrics wording)" grep -q 'could not find the metric' <<<"$custom"
py=$(/usr/bin/python3 - "$karmada_kubeconfig" <<'PY'
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
pods = client.CustomObjectsApi().list_namespaced_custom_object("metrics.k8s.io", "v1beta1", "default", "pods")
print(len(pods["items"]))
PY
)
check "the Python client through the control plane" test "$py" = 2

# A member that fails: the answer still comes, and the Warning reaches kubectl through the aggregator.
curl -sk -X PUT "$control/sim/v1/members/member2/faults" -d '{"refuse":true}' >/dev/null
warned=$(kk get --raw /apis/metrics.k8s.io/v1beta1/namespaces/default/pods 2>&1 >/dev/null)
check "a refusing member2 is reported in a Warning relayed by the aggregator" grep -q 'Warning: .*member2' <<<"$warned"
curl -sk -X DELETE "$control/sim/v1/members/member2/faults" >/dev/null

# Talking to fedmetrics directly: it does its own authentication and authorization.
direct() {  # direct [CURL ARGS...] PATH -> HTTP code
  local path=${*: -1}
  curl -s --cacert "$E2E_TMP/certs/apiserver.crt" -o "$E2E_TMP/direct.out" -w '%{http_code}' "${@:1:$#-1}" \
    "https://127.0.0.1:$port$path"
}
pods=/apis/metrics.k8s.io/v1beta1/namespaces/default/pods
check "no credentials: 401" test "$(direct "$pods")" = 401
check "forged X-Remote-User without the front-proxy certificate: 401" \
  test "$(direct -H 'X-Remote-User: admin' -H 'X-Remote-Group: system:masters' "$pods")" = 401
check "the viewer's token (TokenReview) with list on metrics.k8s.io pods: 200" \
  test "$(direct -H 'Authorization: Bearer viewer-token' "$pods")" = 200
check "a token the control plane does not know: 401" test "$(direct -H 'Authorization: Bearer nope' "$pods")" = 401
code=$(direct -H 'Authorization: Bearer leases-token' "$pods")
check "a user without that right (SubjectAccessReview): 403 with apiserver's wording" \
  test "$code $(grep -o 'cannot list resource \\"pods\\" in API group \\"metrics.k8s.io\\"' "$E2E_TMP/direct.out" | head -1)" \
  = '403 cannot list resource \"pods\" in API group \"metrics.k8s.io\"'
check "the front-proxy certificate with X-Remote-User: 200" \
  test "$(direct --cert "$E2E_TMP/world/front-proxy-client.crt" --key "$E2E_TMP/world/front-proxy-client.key" \
            -H 'X-Remote-User: viewer' -H 'X-Remote-Group: viewers' "$pods")" = 200
check "a client certificate from another CA does not make X-Remote-User trusted: 401" \
  test "$(direct --cert "$E2E_TMP/world/members/member1.crt" --key "$E2E_TMP/world/members/member1.key" \
            -H 'X-Remote-User: viewer' "$pods")" = 401
check "health needs no credentials" test "$(direct /healthz)" = 200
check "discovery is open to any authenticated user without a review" \
  test "$(direct -H 'Authorization: Bearer leases-token' /apis/metrics.k8s.io/v1beta1)" = 200
finish

#!/usr/bin/env bash
# A world file that names the metrics server (its `aggregation` section): the
# simulated control plane starts with the APIServices and the ExternalName
# Service already registered, so `kubectl top pod` against it reaches
# fedmetrics with nothing applied by hand.
# Usage: aggregation_world_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

aggregated_world
start_sim "$E2E_TMP/world.yaml"
check "the APIServices are registered from the world file" \
  test "$(kk get apiservices.apiregistration.k8s.io --no-headers | grep -c 'fedmetrics-system/fedmetrics')" = 4
sleep 1.5
check "unavailable while nothing listens: FailedDiscoveryCheck" \
  grep -q 'False (FailedDiscoveryCheck)' <<<"$(kk get apiservices --no-headers)"
proxied=$(kk get --raw /apis/metrics.k8s.io/v1beta1/pods 2>&1 || true)
check "and proxied requests get 503 (kubectl says: $proxied)" grep -q 'ServiceUnavailable\|service unavailable' <<<"$proxied"
check "and the ExternalName Service" \
  test "$(kk get service -n fedmetrics-system fedmetrics -o jsonpath='{.spec.type}/{.spec.externalName}')" = "ExternalName/127.0.0.1"

spawn "$E2E_TMP/serve.log" "$bin" serve --secure-port "$port" --bind-address 127.0.0.1 \
  --tls-cert-file "$E2E_TMP/certs/serving.crt" --tls-private-key-file "$E2E_TMP/certs/serving.key" \
  --authentication-kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --authorization-kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
  --member-kubeconfig "$E2E_TMP/world/members.kubeconfig"
wait_for_log "$E2E_TMP/serve.log" "serving on https://127.0.0.1:" 10
check "once fedmetrics is up, the failed availability check is retried and passes" \
  kk wait --for=condition=Available --timeout=10s apiservice/v1beta1.metrics.k8s.io
top=$(kk top pod -n default --no-headers)
check "kubectl top pod through the control plane, nothing applied by hand" test "$(grep -c '^nginx-' <<<"$top")" -eq 2
finish

#!/usr/bin/env bash
# Connections that outlive their peer: the simulated control plane and
# members close idle keep-alive connections after 1 s (kube-apiserver: 90 s,
# `fedmetrics sim --idle-timeout`), so every request fedmetrics makes after a
# pause meets a pooled connection the peer has closed. Authenticated requests
# (TokenReview, SubjectAccessReview) through the aggregation layer and
# directly must all succeed after each pause, and the autoscaler, whose sync
# period is longer than the idle timeout, must scale and write the
# FederatedHPA's status after every rescale.
# Usage: idle_connections_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

aggregated_world
idle=1
start_sim "$E2E_TMP/world.yaml" --idle-timeout ${idle}s
load() { curl -sk -X PUT "$control/sim/v1/namespaces/default/workloads/nginx/load" -d "{\"cpu\":\"$1\"}" >/dev/null; }

sync_period=3  # longer than the peers' idle timeout: every sync starts on connections they closed
spawn "$E2E_TMP/serve.log" "$bin" serve --secure-port "$port" --bind-address 127.0.0.1 \
  --tls-cert-file "$E2E_TMP/certs/serving.crt" --tls-private-key-file "$E2E_TMP/certs/serving.key" \
  --authentication-kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --authorization-kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
  --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
  --enable-autoscaler --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
  --horizontal-pod-autoscaler-sync-period ${sync_period}s --horizontal-pod-autoscaler-cpu-initialization-period 1s \
  --horizontal-pod-autoscaler-initial-readiness-delay 1s \
  --leader-elect true --leader-elect-retry-period 1500ms \
  --authentication-token-webhook-cache-ttl 0s --authorization-webhook-cache-authorized-ttl 0s \
  --authorization-webhook-cache-unauthorized-ttl 0s
wait_for_log "$E2E_TMP/serve.log" "serving on https://127.0.0.1:" 10
fedmetrics="https://127.0.0.1:$port"
check "the APIService becomes Available" kk wait --for=condition=Available --timeout=15s apiservice/v1beta1.metrics.k8s.io

# As the viewer (not system:masters, which skips the SubjectAccessReview).
# Every review is made anew (caches off), each after a pause longer than the
# peers' idle timeout, so each one is written on a connection the control
# plane closed meanwhile unless the client notices.
top_ok=0 direct_ok=0 denied_ok=0
for round in 1 2 3 4 5 6; do
  sleep $((idle + 1))
  # Captured, then searched: `kubectl | grep -q` fails under pipefail when
  # grep's early exit kills kubectl with SIGPIPE while it still writes.
  top=$(kk --token viewer-token top pod -n default --no-headers 2>>"$E2E_TMP/top.err" || true)
  if grep -q '^nginx-' <<<"$top"; then top_ok=$((top_ok + 1)); else echo "round $round: kubectl top printed: $top"; fi
  sleep $((idle + 1))
  code=$(curl -s --cacert "$E2E_TMP/certs/ca.crt" -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer viewer-token' \
    "$fedmetrics/apis/metrics.k8s.io/v1beta1/namespaces/default/pods")
  [ "$code" = 200 ] && direct_ok=$((direct_ok + 1))
  code=$(curl -s --cacert "$E2E_TMP/certs/ca.crt" -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer no-such-token' \
    "$fedmetrics/apis/metrics.k8s.io/v1beta1/namespaces/default/pods")
  [ "$code" = 401 ] && denied_ok=$((denied_ok + 1))
done
check "kubectl top pod through the control plane after each idle pause: 6 of 6 (errors: $(sort -u "$E2E_TMP/top.err" | head -3))" \
  test "$top_ok" = 6
check "a bearer token (TokenReview + SubjectAccessReview) after each idle pause: 6 of 6 answered 200" test "$direct_ok" = 6
check "an unknown token is still 401: 6 of 6" test "$denied_ok" = 6
check "no review failed: no 'TokenReview failed' or 'SubjectAccessReview failed' in the log" \
  bash -c "! grep -q 'Review failed' '$E2E_TMP/serve.log'"

metrics=$(curl -s --cacert "$E2E_TMP/certs/ca.crt" -H 'Authorization: Bearer admin-token' "$fedmetrics/metrics")
check "the gate's 401 answers are counted in fedmetrics_apiserver_requests_total" \
  grep -q 'fedmetrics_apiserver_requests_total{code="401",group="metrics.k8s.io",resource="pods"} 6' <<<"$metrics"
check "and no review failure is counted" \
  grep -q 'fedmetrics_delegated_review_failures_total{review="SubjectAccessReview"} 0' <<<"$metrics"

# The autoscaler: Events, scale PUTs, status PATCHes and Lease writes, each
# sync after a pause longer than the idle timeout, and the Lease renewed
# every 1.5 s (also longer than the idle timeout).
cp "$src/examples/federatedhpa/nginx.yaml" "$E2E_TMP/fhpa.yaml"
kk apply -f "$E2E_TMP/fhpa.yaml" >/dev/null
replicas() { kk get deployment nginx -o jsonpath='{.spec.replicas}'; }
status_desired() { kk get fhpa nginx -o jsonpath='{.status.desiredReplicas}'; }
load 300m
reached_max() { test "$(replicas)" = 10; }
check "under load the loop scales up to maxReplicas 10" wait_until 60 reached_max
status_matches() { test "$(status_desired)" = "$(replicas)"; }
check "and the status says so (desiredReplicas = the Deployment's replicas)" wait_until $((sync_period + 3)) status_matches
load 0
back_to_one() { test "$(replicas)" = 1 && test "$(status_desired)" = 1; }
check "without load it scales back to 1, and the status follows" wait_until 60 back_to_one
check "the Lease was renewed all along (retry period 1.5 s > idle timeout): never lost" \
  bash -c "grep -q 'acquired the lease' '$E2E_TMP/serve.log' && ! grep -q 'stopped leading' '$E2E_TMP/serve.log'"
check "no status update failed" bash -c "! grep -q 'cannot update status' '$E2E_TMP/serve.log'"
check "no write to the control plane met a closed connection" \
  bash -c "! grep -q 'connection closed by' '$E2E_TMP/serve.log'"
events=$(kk get events -n default -o jsonpath='{range .items[*]}{.reason} {end}')
check "every rescale has its SuccessfulRescale Event (at least up and down)" \
  test "$(grep -o SuccessfulRescale <<<"$events" | wc -l)" -ge 2
finish

#!/usr/bin/env bash
# --member-qps/--member-burst: a token bucket per member shared by every
# caller. With 1 request per second and a burst of 1, a second query at once
# cannot get a token before its 500 ms deadline: each member is reported as
# throttled in a Warning, and the next second it is asked again.
# Usage: rate_limit_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/examples/worlds/demo.yaml"
E2E_NAMESPACE=shop start_serve "$E2E_TMP/serve.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
  --member-timeout 500ms --member-qps 1 --member-burst 1
sleep 1.2  # discovery at start-up spent the first tokens
path=/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods
first=$(k get --raw "$path" 2>&1 >/dev/null)
second=$(k get --raw "$path" 2>&1 >/dev/null || true)
check "the first query passes without a warning" test -z "$first"
check "an immediate second one finds every member throttled (rate limit in the Warning)" \
  grep -q 'rate limit (--member-qps)' <<<"$second"
sleep 1.2
check "a second later the members are asked again" test -z "$(k get --raw "$path" 2>&1 >/dev/null)"
finish

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
path=/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods
# Discovery and the health probe at start-up spend the first tokens (a few
# seconds' worth at 1 qps); the first query once they are paid passes.
unthrottled() { sleep 1.1; test -z "$(k get --raw "$path" 2>&1 >/dev/null)"; }
check "a query passes without a warning once start-up has paid its tokens" wait_until 15 unthrottled
second=$(k get --raw "$path" 2>&1 >/dev/null || true)
check "an immediate second one finds every member throttled (rate limit in the Warning)" \
  grep -q 'rate limit (--member-qps)' <<<"$second"
sleep 1.2
check "a second later the members are asked again" test -z "$(k get --raw "$path" 2>&1 >/dev/null)"
finish

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
# Two queries at once, from one curl (two kubectl runs may start a second
# apart on a loaded machine, and the bucket refills every second), once each
# member has its one token again: one query gets it, the other waits for the
# next token a second later, past its 500 ms deadline. The two queries differ
# (pods and nodes): identical ones at once would share one fan-out.
sleep 1.1
nodes=/apis/metrics.k8s.io/v1beta1/nodes
curl -s --parallel --parallel-immediate --cacert "$ca" -D "$E2E_TMP/pods.headers" -o "$E2E_TMP/pods.body" "$url$path" \
  --next -s --cacert "$ca" -D "$E2E_TMP/nodes.headers" -o "$E2E_TMP/nodes.body" "$url$nodes" 2>"$E2E_TMP/curl.err"
# A member throttled is named in a Warning of a partial answer, or in the
# Status of a 503 when every member was.
throttled=$(cat "$E2E_TMP"/pods.* "$E2E_TMP"/nodes.* | grep -o 'member[0-9]: throttled: rate limit (--member-qps)' || true)
echo "$throttled"
# per_member: how often each of member1..3 was throttled, "member1:1 member2:1 member3:1 ".
per_member() { for m in member1 member2 member3; do printf '%s:%s ' $m "$(grep -c "^$m:" <<<"$throttled")"; done; }
check "of two queries at once, exactly one finds each member throttled ($(per_member))" \
  test "$(per_member)" = "member1:1 member2:1 member3:1 "
WAIT_UNTIL_INTERVAL=1.1  # a token a second
answered() { test -z "$(k get --raw "$path" 2>&1 >/dev/null)"; }
check "later the members are asked again" wait_until 10 answered
finish

#!/usr/bin/env bash
# End to end, members that are left out are still reported: `fedmetrics sim`
# runs the demo federation (examples/worlds/demo.yaml) with its Karmada
# control plane, and `fedmetrics serve --karmada-kubeconfig` takes the members
# from its Cluster objects. A Cluster turned NotReady is not asked, and every
# answer that misses it says so with `Warning: 299 - "member2: left out:
# Cluster NotReady (ClusterNotReachable)"`; a get by name or an external
# metric whose only possible source it was is 503 naming it, never 404. The
# faults that make the simulated Cluster NotReady (refuse, blackhole,
# wrongCertificate) show the Warning instead of silently shrinking the pod
# list and the summed custom metric. A request every member refuses with the
# same client error (431) gets that error, with no member failure logged; and
# a member refusing a burst of requests writes a few log lines, not thousands.
# Usage: left_out_members_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/examples/worlds/demo.yaml"
E2E_NAMESPACE=shop start_serve "$E2E_TMP/serve.log" --karmada-kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
  --member-timeout 1s

pods_path=/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods
deployment_metric=/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/deployments.apps/web/http_requests
external_metric=/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_messages_ready
left_out='member2: left out: Cluster NotReady (ClusterNotReachable)'

# fetch PATH: curl with the answer in $body, $status and the headers in $headers.
fetch() {
  local out
  out=$(curl -s -D "$E2E_TMP/headers" -o "$E2E_TMP/body" -w '%{http_code}' --cacert "$ca" "$url$1")
  status=$out
  body=$(cat "$E2E_TMP/body")
  headers=$(cat "$E2E_TMP/headers")
}
# members_of JSON: the sorted source clusters of a pod list's items.
members_of() {
  json_get "${1:-{\}}" \
    "sorted(set(i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] for i in d.get('items', [])))" \
    2>/dev/null || echo "no answer"
}
warned() { grep -qi "^warning: 299 - \"$1" <<<"$headers"; }
no_warning() { ! grep -qi '^warning:' <<<"$headers"; }
faults() {  # faults METHOD MEMBER [BODY]
  curl -sk -o /dev/null -X "$1" "$control/sim/v1/members/$2/faults" -H 'Content-Type: application/json' ${3:+-d "$3"}
}
set_ready() {  # set_ready MEMBER STATUS REASON: the Ready condition, as Karmada's cluster status controller writes it
  kk patch clusters.cluster.karmada.io "$1" --subresource=status --type merge -p \
    "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"$2\",\"reason\":\"$3\",\"message\":\"set by the test\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}" \
    >/dev/null
}

# Every member's pods and web's custom metric, with no Warning at all.
complete() {
  fetch "$pods_path"
  [ "$(members_of "$body")" = "['member1', 'member2', 'member3']" ] && no_warning || return 1
  fetch "$deployment_metric"
  [ "$status" = 200 ] && no_warning
}
wait_until 20 complete || fail "the three members did not all answer within 20 s: $headers $body"
fetch "$pods_path"
all_pods=$(json_get "$body" "len(d['items'])")
member2_pod=$(json_get "$body" \
  "[i['metadata']['name'] for i in d['items'] if i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] == 'member2'][0]")
fetch "$deployment_metric"
full_value=$(json_get "$body" "d['items'][0]['value']")

# --- a Cluster turned NotReady in the control plane (the member itself still answers) ---
set_ready member2 False ClusterNotReachable
left_out_seen() { fetch "$pods_path"; warned "$left_out"; }
check "member2's Cluster NotReady: within seconds the pod list warns '$left_out'" wait_until 10 left_out_seen
check "and holds the other members' pods only" \
  test "$(members_of "$body")" = "['member1', 'member3']"
check "/metrics: fedmetrics_member_left_out{cluster=\"member2\"} 1" \
  bash -c "curl -s --cacert '$ca' '$url/metrics' | grep -q '^fedmetrics_member_left_out{cluster=\"member2\"} 1'"
check "the serve log says why member2 is left out" \
  grep -q 'cluster member2 is left out until it is Ready: Ready=False (ClusterNotReachable' "$E2E_TMP/serve.log"

k top pod >"$E2E_TMP/top.out" 2>"$E2E_TMP/top.err" || true
check "kubectl top pod prints the Warning" grep -q "Warning: $left_out" "$E2E_TMP/top.err"
check "and lists the pods of member1 and member3 ($(grep -c . "$E2E_TMP/top.out") lines)" \
  test "$(($(grep -c . "$E2E_TMP/top.out") - 1))" -lt "$all_pods"
k get --raw "$pods_path" >/dev/null 2>"$E2E_TMP/raw.err" || true
check "kubectl get --raw prints it too" grep -q "Warning: $left_out" "$E2E_TMP/raw.err"

fetch "$pods_path/$member2_pod"
check "a get by name of a pod only member2 runs is 503 ($status), not 404" test "$status" = 503
check "naming member2 and why" grep -q "$left_out" <<<"$body"
k top pod "$member2_pod" >/dev/null 2>"$E2E_TMP/top-one.err" || true
check "kubectl top pod NAME says ServiceUnavailable, not NotFound" grep -q 'ServiceUnavailable' "$E2E_TMP/top-one.err"

fetch "$deployment_metric"
partial_value=$(json_get "$body" "d['items'][0]['value']" 2>/dev/null || echo none)
check "web's summed custom metric ($full_value -> $partial_value without member2) carries the Warning" \
  bash -c "[ '$status' = 200 ] && [ '$partial_value' != '$full_value' ] && grep -qi '^warning: 299 - \"$left_out' '$E2E_TMP/headers'"

fetch "$pods_path?labelSelector=fedmetrics/cluster!=member2"
check "excluding member2 on purpose (fedmetrics/cluster!=member2): no Warning" \
  bash -c "[ '$status' = 200 ] && ! grep -qi '^warning:' '$E2E_TMP/headers'"
fetch "$pods_path?labelSelector=fedmetrics/cluster+notin+(member2)"
check "(notin): no Warning either" bash -c "[ '$status' = 200 ] && ! grep -qi '^warning:' '$E2E_TMP/headers'"
fetch "$pods_path?labelSelector=fedmetrics/cluster=member2"
check "choosing member2 alone: 503 naming it ($status)" bash -c "[ '$status' = 503 ] && grep -q '$left_out' '$E2E_TMP/body'"

set_ready member2 True ClusterReady
check "Ready again: every member answers and the Warning goes" wait_until 15 complete

# --- an external metric whose only source is left out: 503, not 404 ---
set_ready member1 Unknown ClusterStatusUnknown
external_503() { fetch "$external_metric"; [ "$status" = 503 ]; }
check "member1 (the only member serving external metrics) Ready=Unknown: queue_messages_ready is 503" \
  wait_until 10 external_503
check "naming member1 and its Ready condition" \
  grep -q 'member1: left out: Cluster Ready=Unknown (ClusterStatusUnknown)' <<<"$body"
fetch /apis/external.metrics.k8s.io/v1beta1/namespaces/shop/no_such_metric
check "(a metric that may be in member1 is 503 too: $status)" test "$status" = 503
set_ready member1 True ClusterReady
check "member1 Ready again: every member answers" wait_until 15 complete

# --- the faults that turn the simulated Cluster NotReady: a Warning, never a silent shrink ---
for fault in refuse blackhole wrongCertificate; do
  faults PUT member2 "{\"$fault\":true}"
  # While the member set catches up the Warning is the member's failure, then
  # "left out": at no moment is the answer silently short.
  silent=0
  left_out_fault() {
    fetch "$pods_path"
    if [ "$(members_of "$body")" != "['member1', 'member2', 'member3']" ] && ! grep -qi '^warning: 299 - "member2: ' <<<"$headers"; then
      silent=1
    fi
    warned "$left_out"
  }
  check "$fault on member2: the pod list warns '$left_out' within seconds" wait_until 10 left_out_fault
  check "$fault: never an answer short of member2's pods without a Warning naming it" test "$silent" = 0
  fetch "$deployment_metric"
  check "$fault: web's custom metric carries the Warning" warned "$left_out"
  faults DELETE member2
  check "$fault cleared: every member answers again" wait_until 15 complete
done

# --- a client error is not a member outage ---
# A selector our server accepts (under its 64 KiB of request head) but whose
# forwarded, percent-encoded form (',' and '=' become %2C and %3D) is over the
# members' 64 KiB (the simulator's TlsServer default): every member answers 431.
# (From python: the URL is too long for a command-line argument or a curl config line.)
oversized=$(/usr/bin/python3 - "$url" "$pods_path" "$ca" "$E2E_TMP/body" <<'PY'
import http.client, ssl, sys, urllib.parse
url, path, ca, out = sys.argv[1:5]
# 1,000 requirements (our cap) of 63 bytes: 63,000 bytes (under our 64 KiB),
# 67,000 once ',' and '=' are escaped (over the members'). Sent as is: ',' and
# '=' are allowed in a query.
selector = ','.join('k%03d=' % i + 'v' * 57 for i in range(1000))
conn = http.client.HTTPSConnection(urllib.parse.urlsplit(url).netloc, context=ssl.create_default_context(cafile=ca),
                                   timeout=20)
conn.request('GET', path + '?labelSelector=' + selector)
reply = conn.getresponse()
open(out, 'wb').write(reply.read())
print(reply.status)
PY
)
check "an oversized selector every member refuses with 431 is answered 431 ($oversized)" test "$oversized" = 431
check "as a Kubernetes Status" \
  test "$(json_get "$(cat "$E2E_TMP/body")" "d['kind'], d['code']" 2>/dev/null)" = "Status 431"
check "and no member failure is logged for it" bash -c "! grep -q 'http_status.*431' '$E2E_TMP/serve.log'"

# --- member-failure log lines are rate-limited per member and reason ---
start_serve "$E2E_TMP/serve-members.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" --member-timeout 1s
faults PUT member3 '{"refuse":true}'
# Each a different query (no coalescing), each asking member3.
for i in $(seq 200); do printf 'url = "%s"\noutput = "/dev/null"\n' "$url$pods_path?labelSelector=n!=$i"; done \
  >"$E2E_TMP/burst.curl"
curl -s --no-progress-meter --cacert "$ca" --parallel --parallel-max 20 -K "$E2E_TMP/burst.curl" || true
faults DELETE member3
refused_lines=$(grep -c 'member member3: refused' "$E2E_TMP/serve-members.log" || true)
check "200 requests with member3 refusing: $refused_lines log line(s) for it, not one per request" \
  bash -c "[ '$refused_lines' -ge 1 ] && [ '$refused_lines' -le 3 ]"
finish

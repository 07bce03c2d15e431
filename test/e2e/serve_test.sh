#!/usr/bin/env bash
# End to end: `fedmetrics serve` alone (no member clusters yet) answers the
# real kubectl and curl over TLS on loopback with Kubernetes-shaped answers.
# Usage: serve_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1

start_serve "$E2E_TMP/serve.log"
code() { curl -s -o /dev/null -w '%{http_code}' --cacert "$ca" "$@"; }

groups=$(k get --raw /apis)
check "discovery lists the three metrics groups, custom preferring v1beta2" \
  test "$(json_get "$groups" "[g['name']+'='+g['preferredVersion']['version'] for g in d['groups']]")" \
  = "['metrics.k8s.io=v1beta1', 'custom.metrics.k8s.io=v1beta2', 'external.metrics.k8s.io=v1beta1']"
group=$(k get --raw /apis/custom.metrics.k8s.io)
check "/apis/custom.metrics.k8s.io is its APIGroup: both versions, v1beta2 preferred" \
  test "$(json_get "$group" "d['kind'], [v['version'] for v in d['versions']], d['preferredVersion']['groupVersion']")" \
  = "APIGroup ['v1beta2', 'v1beta1'] custom.metrics.k8s.io/v1beta2"
check "/apis/external.metrics.k8s.io is its APIGroup" \
  test "$(json_get "$(k get --raw /apis/external.metrics.k8s.io)" "d['kind'], d['name'], d['preferredVersion']['version']")" \
  = "APIGroup external.metrics.k8s.io v1beta1"
resources=$(k get --raw /apis/metrics.k8s.io/v1beta1)
check "metrics.k8s.io resources are pods and nodes, get and list" \
  test "$(json_get "$resources" "[(r['name'], r['namespaced'], r['verbs']) for r in d['resources']]")" \
  = "[('nodes', False, ['get', 'list']), ('pods', True, ['get', 'list'])]"
custom=$(k get --raw /apis/custom.metrics.k8s.io/v1beta1)
check "custom metrics discovery answers an empty list without members" \
  test "$(json_get "$custom" "d['groupVersion'], d['resources']")" = "custom.metrics.k8s.io/v1beta1 []"

top=$(k top pod 2>&1 || true)
check "kubectl top pod reports the 503 and its reason" grep -q "ServiceUnavailable.*no member cluster" <<<"$top"
bad=$(k get --raw '/apis/metrics.k8s.io/v1beta1/pods?labelSelector=a%20b' 2>&1 || true)
check "a malformed label selector is a BadRequest with the parser's text" \
  grep -q "BadRequest.*found 'b', expected: in, notin" <<<"$bad"

check "/api is 404" test "$(code "$url/api")" = 404
check "/openapi/v2 is 404" test "$(code "$url/openapi/v2")" = 404
check "/openapi/v3 is 404" test "$(code "$url/openapi/v3")" = 404
check "POST is 405" test "$(code -X POST "$url/apis/metrics.k8s.io/v1beta1/pods")" = 405
check "watch is 405" test "$(code "$url/apis/metrics.k8s.io/v1beta1/pods?watch=true")" = 405
check "a malformed custom metrics path is 400" test "$(code "$url/apis/custom.metrics.k8s.io/v1beta2/pods")" = 400
check "healthz is 200" test "$(code "$url/healthz")" = 200
check "HEAD healthz is 200" test "$(code -I "$url/healthz")" = 200
check "readyz fails while no member has answered" test "$(code "$url/readyz")" = 500
check "livez is 200: the process is alive, members or not" test "$(code "$url/livez")" = 200
check "livez says ok" test "$(curl -s --cacert "$ca" "$url/livez")" = ok
version=$(k version -o json 2>/dev/null || true)
check "kubectl version reads /version: our gitVersion" \
  test "$(json_get "$version" "d['serverVersion']['gitVersion'].startswith('v')")" = True
check "/version is version.Info JSON" \
  test "$(json_get "$(curl -s --cacert "$ca" "$url/version")" "sorted(k for k in ('major', 'minor', 'gitVersion', 'platform') if k in d)")" \
  = "['gitVersion', 'major', 'minor', 'platform']"
status=$(curl -s --cacert "$ca" "$url/apis/metrics.k8s.io/v1beta1/nodes")
check "errors are Status objects with kind, apiVersion, code and reason" \
  test "$(json_get "$status" "d['kind'], d['apiVersion'], d['code'], d['reason']")" = "Status v1 503 ServiceUnavailable"
check "errors carry X-Content-Type-Options: nosniff" \
  grep -qi '^x-content-type-options: nosniff' <(curl -s -D - -o /dev/null --cacert "$ca" "$url/api")
check "self metrics count requests by code" \
  grep -q 'fedmetrics_apiserver_requests_total{code="503",group="metrics.k8s.io",resource="pods"}' \
  <(curl -s --cacert "$ca" "$url/metrics")
check "TLS 1.1 is refused" bash -c "! curl -s --cacert '$ca' --tls-max 1.1 '$url/healthz' >/dev/null 2>&1"
check "keep-alive: two requests on one connection" \
  test "$(curl -s -w '%{num_connects}\n' --cacert "$ca" "$url/healthz" "$url/healthz" | grep -c '^ok0$')" = 1

# Configuration errors: clear message, non-zero exit.
set +e
"$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/c2" >"$E2E_TMP/noauth.log" 2>&1
rc=$?
set -e
check "serve without an authentication setup refuses to start" test "$rc" -ne 0
check "and says which flag is missing" grep -q -- "--insecure-development-no-auth" "$E2E_TMP/noauth.log"
set +e
"$bin" serve --tls-cert-file /nonexistent.crt --insecure-development-no-auth >"$E2E_TMP/badfile.log" 2>&1
rc=$?
set -e
check "an unreadable certificate file is an error naming the flag" \
  bash -c "[ $rc -ne 0 ] && grep -q -- '--tls-cert-file' '$E2E_TMP/badfile.log'"
set +e
"$bin" serve --secure-port "$port" --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs" --insecure-development-no-auth \
  >"$E2E_TMP/inuse.log" 2>&1
rc=$?
set -e
check "a port in use is an error naming the address" \
  bash -c "[ $rc -ne 0 ] && grep -q 'cannot listen on 127.0.0.1:$port' '$E2E_TMP/inuse.log'"
check "--help documents every serve flag" bash -c "'$bin' serve --help | grep -q -- '--tls-min-version'"
# A number below its bound: the flag, what it needs and what it was given
# (not a range up to the largest double, written out in 309 digits).
bound() { # EXPECTED FLAG VALUE: serve refuses FLAG=VALUE with EXPECTED, exit 2
  local rc=0
  "$bin" serve "$2" "$3" --insecure-development-no-auth >"$E2E_TMP/bound.log" 2>&1 || rc=$?
  [ "$rc" = 2 ] && grep -qx -- "$2: $1" "$E2E_TMP/bound.log" && ! grep -q 179769 "$E2E_TMP/bound.log"
}
check "a negative --member-qps is refused, saying why" bound "must not be negative, not -1" --member-qps -1
check "a negative --member-failure-threshold is refused" bound "must not be negative, not -2" --member-failure-threshold -2
check "--cache-max-entries 0 is refused, saying why" bound "must be more than 0, not 0" --cache-max-entries 0
finish

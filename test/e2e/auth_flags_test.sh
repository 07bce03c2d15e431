#!/usr/bin/env bash
# End to end: authentication and authorization configured by flags alone, as
# an extension API server run outside the control plane's reach would be:
# --authentication-skip-lookup (no extension-apiserver-authentication
# ConfigMap), the front-proxy trust from the --requestheader-* flags, client
# certificates from --client-ca-file, bearer tokens and SubjectAccessReview
# against the simulated control plane, a custom
# --authorization-always-allow-paths and --tls-min-version. Then the
# ConfigMap lookup as k8s.io/apiserver's lookupMissingConfigInCluster does
# it: read only for what the CA flags leave out, and a missing ConfigMap
# (404) is no error, only no trust from it.
# Usage: auth_flags_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/test/e2e/karmada.world.yaml" -v  # -v: the control plane logs each request (reviews are counted)
world="$E2E_TMP/world"
karmada_kubeconfig="$world/karmada.kubeconfig"

# Our own client CA, and two users of it: viewer (allowed to list pod
# metrics by the control plane) and nobody (allowed nothing).
pki="$E2E_TMP/pki"
mkdir -p "$pki"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=e2e-client-ca \
  -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
client_cert() { # NAME SUBJECT
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$2" \
    -keyout "$pki/$1.key" -out "$pki/$1.csr" 2>/dev/null
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 1 \
    -extfile <(printf 'extendedKeyUsage = clientAuth\n') -out "$pki/$1.crt" 2>/dev/null
}
client_cert viewer "/O=viewers/CN=viewer"
client_cert nobody "/CN=nobody"

# start_gated LOG ALLOWED_NAMES: serve with the flags; sets $port.
start_gated() {
  spawn "$1" "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs" \
    --authentication-kubeconfig "$karmada_kubeconfig" --authorization-kubeconfig "$karmada_kubeconfig" \
    --authentication-skip-lookup \
    --requestheader-client-ca-file "$world/front-proxy-ca.crt" --requestheader-allowed-names "$2" \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --client-ca-file "$pki/ca.crt" \
    --authorization-always-allow-paths /healthz,/version \
    --tls-min-version VersionTLS13 \
    --member-kubeconfig "$world/members.kubeconfig" --member-timeout 1s
  wait_for_log "$1" "serving on https://127.0.0.1:" 10
  port=$(grep -o 'https://127.0.0.1:[0-9]*' "$1" | head -1 | sed 's/.*://')
}
start_gated "$E2E_TMP/serve.log" front-proxy-client
check "the trust came from the flags: front proxy and client certificates, tokens by TokenReview" \
  grep -q 'authentication: front proxy: yes, client certificates: yes, tokens: TokenReview' "$E2E_TMP/serve.log"

direct() {  # direct [CURL ARGS...] PATH -> HTTP code
  local path=${*: -1}
  curl -s --cacert "$E2E_TMP/certs/apiserver.crt" -o "$E2E_TMP/direct.out" -w '%{http_code}' "${@:1:$#-1}" \
    "https://127.0.0.1:$port$path"
}
pods=/apis/metrics.k8s.io/v1beta1/namespaces/default/pods
front_proxy=(--cert "$world/front-proxy-client.crt" --key "$world/front-proxy-client.key")

check "front-proxy certificate (--requestheader-client-ca-file) with X-Remote-User viewer: 200" \
  test "$(direct "${front_proxy[@]}" -H 'X-Remote-User: viewer' -H 'X-Remote-Group: viewers' "$pods")" = 200
check "the same with a user the control plane denies: 403" \
  test "$(direct "${front_proxy[@]}" -H 'X-Remote-User: nobody' "$pods")" = 403
check "a --client-ca-file certificate, CN=viewer O=viewers: 200" \
  test "$(direct --cert "$pki/viewer.crt" --key "$pki/viewer.key" "$pods")" = 200
nobody_code=$(direct --cert "$pki/nobody.crt" --key "$pki/nobody.key" "$pods")
check "a --client-ca-file certificate, CN=nobody: 403" test "$nobody_code" = 403
check "and the Status names the user from the certificate" grep -q 'User \\"nobody\\" cannot list resource' "$E2E_TMP/direct.out"
check "X-Remote-User from a --client-ca-file certificate is not trusted: the user is the certificate's CN (403)" \
  test "$(direct --cert "$pki/nobody.crt" --key "$pki/nobody.key" -H 'X-Remote-User: viewer' "$pods")" = 403
check "a bearer token (TokenReview) still works: 200" \
  test "$(direct -H 'Authorization: Bearer viewer-token' "$pods")" = 200
check "no credentials: 401" test "$(direct "$pods")" = 401

# --authorization-always-allow-paths /healthz,/version: those two need no
# credentials; /readyz, left out, now does.
check "/version is in --authorization-always-allow-paths: 200 without credentials" test "$(direct /version)" = 200
check "/healthz too" test "$(direct /healthz)" = 200
check "/readyz is not in the list: 401 without credentials" test "$(direct /readyz)" = 401
check "/readyz with credentials: 200" test "$(direct -H 'Authorization: Bearer viewer-token' /readyz)" = 200

# The SubjectAccessReview answers are cached (10 s allowed, 10 s denied):
# the same request again within the window is not reviewed again.
sar_count() { grep -c 'subjectaccessreviews' "$E2E_TMP/sim.log" || true; }
direct --cert "$pki/viewer.crt" --key "$pki/viewer.key" /apis/metrics.k8s.io/v1beta1/nodes >/dev/null
direct --cert "$pki/nobody.crt" --key "$pki/nobody.key" /apis/metrics.k8s.io/v1beta1/nodes >/dev/null
reviews=$(sar_count)
check "the control plane logged the reviews made so far ($reviews)" test "$reviews" -ge 2
allowed_again=$(direct --cert "$pki/viewer.crt" --key "$pki/viewer.key" /apis/metrics.k8s.io/v1beta1/nodes)
denied_again=$(direct --cert "$pki/nobody.crt" --key "$pki/nobody.key" /apis/metrics.k8s.io/v1beta1/nodes)
check "allowed and denied again from the caches (200, 403) without another review" \
  test "$allowed_again $denied_again $(sar_count)" = "200 403 $reviews"

# --tls-min-version VersionTLS13.
check "--tls-min-version VersionTLS13: a TLS 1.2 client is refused" \
  bash -c "! curl -s --cacert '$E2E_TMP/certs/apiserver.crt' --tls-max 1.2 'https://127.0.0.1:$port/healthz' >/dev/null 2>&1"
check "and TLS 1.3 is served" test "$(direct --tlsv1.3 /healthz)" = 200

# --requestheader-allowed-names: a front-proxy certificate with another name is not trusted.
start_gated "$E2E_TMP/serve-other.log" someone-else
check "--requestheader-allowed-names someone-else: the front-proxy-client certificate is refused (401)" \
  test "$(direct "${front_proxy[@]}" -H 'X-Remote-User: viewer' -H 'X-Remote-Group: viewers' "$pods")" = 401

# The lookup of kube-system/extension-apiserver-authentication (no --authentication-skip-lookup).
cm_reads() { grep -c 'configmaps/extension-apiserver-authentication' "$E2E_TMP/sim.log" || true; }
# start_lookup LOG [CA FLAGS...]: serve with --authentication-kubeconfig and
# the lookup; sets $port, or fails when serve did not start.
start_lookup() {
  local log=$1; shift
  spawn "$log" "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs" \
    --authentication-kubeconfig "$karmada_kubeconfig" --authorization-kubeconfig "$karmada_kubeconfig" \
    "$@" --member-kubeconfig "$world/members.kubeconfig" --member-timeout 1s
  wait_for_log "$log" "serving on https://127.0.0.1:" 10 || return 1
  port=$(grep -o 'https://127.0.0.1:[0-9]*' "$log" | head -1 | sed 's/.*://')
}
front_proxy_flags=(--requestheader-client-ca-file "$world/front-proxy-ca.crt"
  --requestheader-allowed-names front-proxy-client --requestheader-username-headers X-Remote-User
  --requestheader-group-headers X-Remote-Group)
kk delete configmap -n kube-system extension-apiserver-authentication >/dev/null
reads_before=$(cm_reads)
if start_lookup "$E2E_TMP/serve-both.log" "${front_proxy_flags[@]}" --client-ca-file "$pki/ca.crt"; then
  pass "no ConfigMap, both CA flags given: serve starts"
  check "and does not read the ConfigMap at all (the flags cover both CAs)" test "$(cm_reads)" = "$reads_before"
  check "the front proxy (from --requestheader-client-ca-file) is trusted: 200" \
    test "$(direct "${front_proxy[@]}" -H 'X-Remote-User: viewer' -H 'X-Remote-Group: viewers' "$pods")" = 200
else
  fail "no ConfigMap, both CA flags given: serve starts"
fi

if start_lookup "$E2E_TMP/serve-client-ca.log" --client-ca-file "$pki/ca.crt"; then
  pass "no ConfigMap, only --client-ca-file: serve starts (a 404 is not an error)"
  check "it looked the ConfigMap up for the front-proxy CA the flags leave out" test "$(cm_reads)" -gt "$reads_before"
  check "and says there is no front-proxy CA from it" \
    grep -q 'extension-apiserver-authentication does not exist: no front-proxy CA from it' "$E2E_TMP/serve-client-ca.log"
  check "a --client-ca-file certificate is trusted: 200" \
    test "$(direct --cert "$pki/viewer.crt" --key "$pki/viewer.key" "$pods")" = 200
  check "a front-proxy certificate is not (no front-proxy trust): 401" \
    test "$(direct "${front_proxy[@]}" -H 'X-Remote-User: viewer' "$pods")" = 401
else
  fail "no ConfigMap, only --client-ca-file: serve starts (a 404 is not an error)"
fi

if start_lookup "$E2E_TMP/serve-none.log"; then
  pass "no ConfigMap and no CA flags: serve starts with tokens only"
  check "the log says neither CA comes from it" \
    grep -q 'does not exist: no client CA or front-proxy CA from it' "$E2E_TMP/serve-none.log"
  check "a bearer token (TokenReview) is served: 200" test "$(direct -H 'Authorization: Bearer viewer-token' "$pods")" = 200
  check "a client certificate is no authentication source: 401" \
    test "$(direct --cert "$pki/viewer.crt" --key "$pki/viewer.key" "$pods")" = 401
else
  fail "no ConfigMap and no CA flags: serve starts with tokens only"
fi
finish

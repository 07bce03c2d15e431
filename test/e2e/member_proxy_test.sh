#!/usr/bin/env bash
# Member clusters behind an HTTP proxy: a kubeconfig cluster's proxy-url (as
# kubectl and client-go read it) makes fedmetrics open each member connection
# with CONNECT through the proxy and run TLS to the member inside the tunnel.
# The proxy is test/e2e/tools/connect_proxy.py on loopback, which logs every
# request; a second one refuses with 407, and that refusal is named.
# Usage: member_proxy_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/examples/worlds/demo.yaml"

# start_proxy NAME [deny]: sets proxy_port.
start_proxy() {
  spawn "$E2E_TMP/$1.log" /usr/bin/python3 "$src/test/e2e/tools/connect_proxy.py" "$E2E_TMP/$1.requests" ${2:-}
  wait_for_log "$E2E_TMP/$1.log" "proxy listening on" 10
  proxy_port=$(grep -o 'listening on [0-9]*' "$E2E_TMP/$1.log" | sed 's/.* //')
}
# with_proxy URL OUT: the world's members kubeconfig with proxy-url on every cluster.
with_proxy() { sed "s|^\( *\)server: \(.*\)|\1server: \2\n\1proxy-url: $1|" "$E2E_TMP/world/members.kubeconfig" >"$2"; }

start_proxy good
with_proxy "http://fedmetrics:secret@127.0.0.1:$proxy_port" "$E2E_TMP/proxied.kubeconfig"
E2E_NAMESPACE=shop start_serve "$E2E_TMP/serve.log" --member-kubeconfig "$E2E_TMP/proxied.kubeconfig" --member-timeout 10s
all_members_answer() {
  local pods
  pods=$(k get --raw /apis/metrics.k8s.io/v1beta1/namespaces/shop/pods) || return 1
  test "$(json_get "$pods" "sorted(set(i['metadata']['annotations']['resource.karmada.io/query-from-cluster'] for i in d['items']))")" \
    = "['member1', 'member2', 'member3']"
}
check "pod metrics from all three members through the proxy" wait_until 20 all_members_answer
member_ports=$(grep -o 'https://127.0.0.1:[0-9]*' "$E2E_TMP/world/members.kubeconfig" | sed 's/.*://' | sort -u)
for p in $member_ports; do
  check "the proxy was asked to CONNECT 127.0.0.1:$p" grep -q "^CONNECT 127.0.0.1:$p HTTP/1.1$" "$E2E_TMP/good.requests"
done
check "nothing else went through the proxy (TLS runs inside the tunnels)" \
  test "$(grep -vc '^CONNECT ' "$E2E_TMP/good.requests")" -eq 0

# A server URL without a port: the CONNECT still names one (443), as proxies require.
cat >"$E2E_TMP/portless.kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
  - name: portless
    cluster: {server: "https://portless.invalid", proxy-url: "http://127.0.0.1:$proxy_port", insecure-skip-tls-verify: true}
contexts:
  - name: portless
    context: {cluster: portless, user: portless}
users:
  - name: portless
    user: {token: unused}
KUBECONFIG
spawn "$E2E_TMP/serve4.log" "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs4" --insecure-development-no-auth \
  --member-kubeconfig "$E2E_TMP/portless.kubeconfig" --member-timeout 2s
check "a server URL without a port is CONNECTed on 443" \
  wait_for_log "$E2E_TMP/good.requests" "^CONNECT portless.invalid:443 HTTP/1.1$" 10

# A proxy that refuses: the member is unreachable, and the log says why.
start_proxy bad deny
with_proxy "http://127.0.0.1:$proxy_port" "$E2E_TMP/denied.kubeconfig"
spawn "$E2E_TMP/serve2.log" "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs2" --insecure-development-no-auth \
  --member-kubeconfig "$E2E_TMP/denied.kubeconfig" --member-timeout 2s
wait_for_log "$E2E_TMP/serve2.log" "serving on https://127.0.0.1:" 10
check "a 407 from the proxy is reported with the proxy and the status" \
  wait_for_log "$E2E_TMP/serve2.log" "proxy 127.0.0.1:$proxy_port refused CONNECT 127.0.0.1:[0-9]*: HTTP 407" 10
# What a client sees: no member answers, and the answer says why.
denied_url=$(grep -o 'https://127.0.0.1:[0-9]*' "$E2E_TMP/serve2.log" | head -1)
denied_code=$(curl -s --cacert "$E2E_TMP/certs2/apiserver.crt" -o "$E2E_TMP/denied.json" -w '%{http_code}' \
  "$denied_url/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods")
cat "$E2E_TMP/denied.json"; echo
check "a client asking for pod metrics gets 503 naming the proxy's 407 ($denied_code)" \
  bash -c "[ '$denied_code' = 503 ] && grep -q 'refused CONNECT .*HTTP 407' '$E2E_TMP/denied.json'"
check "the CONNECTs went to the refusing proxy" grep -q '^CONNECT 127.0.0.1:' "$E2E_TMP/bad.requests"

# Only http:// proxies: anything else is refused at start, by name.
with_proxy "socks5://127.0.0.1:1080" "$E2E_TMP/socks.kubeconfig"
set +e
socks=$(timeout 10 "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs3" \
  --insecure-development-no-auth --member-kubeconfig "$E2E_TMP/socks.kubeconfig" 2>&1)
socks_exit=$?
set -e
check "a socks5:// proxy-url stops serve at start (exit 1)" test "$socks_exit" -eq 1
check "and names the reason" grep -q 'only http:// proxies (HTTP CONNECT) are supported, not socks5://' <<<"$socks"
finish

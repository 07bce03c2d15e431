#!/usr/bin/env bash
# Host-name resolution is bounded by the member deadline. A member whose
# server name goes to a DNS server that never answers (resolv.conf timeout
# 20 s) must fail as a timeout by --member-timeout, and the answer from the
# other members must not wait for the lookup. fedmetrics runs in a mount
# namespace of its own (unshare -m) with its own /etc/resolv.conf; the DNS
# server is test/e2e/tools/silent_dns.py on 127.0.0.2. Skipped where mount
# namespaces are not allowed (not root, no CAP_SYS_ADMIN).
# Usage: dns_deadline_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

printf 'nameserver 127.0.0.2\noptions timeout:20 attempts:1\n' >"$E2E_TMP/resolv.conf"
if ! unshare -m bash -c "mount --bind '$E2E_TMP/resolv.conf' /etc/resolv.conf" 2>/dev/null; then
  skip "cannot bind-mount /etc/resolv.conf in a mount namespace here"
fi
spawn "$E2E_TMP/dns.log" /usr/bin/python3 "$src/test/e2e/tools/silent_dns.py" 127.0.0.2
if ! wait_for_log "$E2E_TMP/dns.log" "silent dns on" 5; then
  signal "$spawned"; reap "$spawned" || true  # its failure to bind is the reason for the skip
  skip "cannot bind port 53 on 127.0.0.2"
fi

start_sim "$src/examples/worlds/demo.yaml"
cat >"$E2E_TMP/unresolvable.kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
  - name: unresolvable
    cluster: {server: "https://member4.fedmetrics-e2e.test:6443", insecure-skip-tls-verify: true}
contexts:
  - name: unresolvable
    context: {cluster: unresolvable, user: unresolvable}
users:
  - name: unresolvable
    user: {token: unused}
KUBECONFIG
# start_serve runs "$bin": here, fedmetrics inside the mount namespace (the
# same process: unshare and bash exec, so killing the PID stops serve).
real_bin=$bin
bin="$E2E_TMP/fedmetrics-in-namespace"
cat >"$bin" <<WRAPPER
#!/usr/bin/env bash
exec unshare -m bash -c 'mount --bind "\$0" /etc/resolv.conf && exec "\$@"' "$E2E_TMP/resolv.conf" "$real_bin" "\$@"
WRAPPER
chmod +x "$bin"
# timeout's own status (124): getent was still waiting when it was stopped (a
# lookup that fails at once, or a mount that fails, is another status).
check "the lookup really hangs in the namespace (getent waits for the silent server)" \
  bash -c "timeout 2 unshare -m bash -c 'mount --bind \"$E2E_TMP/resolv.conf\" /etc/resolv.conf && getent hosts member4.fedmetrics-e2e.test'; test \$? = 124"

started=$SECONDS
E2E_NAMESPACE=shop start_serve "$E2E_TMP/serve.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
  --member-kubeconfig "$E2E_TMP/unresolvable.kubeconfig" --member-timeout 2s
# Discovery asks the member in the background, with the same deadline.
check "the member's lookup fails as a timeout by the deadline, not after resolv.conf's 20 s" \
  wait_for_log "$E2E_TMP/serve.log" "resolve member4.fedmetrics-e2e.test:6443: deadline exceeded" 8
echo "# first timeout logged $((SECONDS - started)) s after serve started" >&2

members_answered() { curl -sk -o /dev/null -w '%{http_code}' "$url/readyz" | grep -q 200; }
check "serve is ready from the other members" wait_until 10 members_answered
t0=$(date +%s.%N)
code=$(curl -sk -D "$E2E_TMP/headers" -o "$E2E_TMP/pods.json" -w '%{http_code}' --max-time 30 \
  "$url/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods")
elapsed=$(python3 -c "print(round($(date +%s.%N) - $t0, 2))")
echo "# pod metrics answered in ${elapsed} s" >&2
check "pod metrics answer 200 with the other members' pods" test "$code" = 200
check "bounded by the 2 s member deadline (under 5 s, far from the lookup's 20 s)" python3 -c "import sys; sys.exit(0 if $elapsed < 5.0 else 1)"
check "the pods of the members that resolve are there" grep -q 'query-from-cluster":"member1"' "$E2E_TMP/pods.json"

# The lookups started above still hang (20 s); shutdown must not wait for them.
serve_pid=${E2E_PIDS[-1]}
signal "$serve_pid"
exited() { ! kill -0 "$serve_pid" 2>/dev/null || grep -q '^State:.*Z' "/proc/$serve_pid/status" 2>/dev/null; }
check "serve exits within 3 s of SIGTERM while a lookup still hangs" wait_until 3 exited
finish

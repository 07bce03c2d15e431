#!/usr/bin/env bash
# Out of file descriptors: `fedmetrics serve`, its RLIMIT_NOFILE lowered to a
# few more than it uses, is flooded with connections until accept fails
# (EMFILE). It must back off instead of spinning on the listener (which stays
# readable while a connection waits: a core at 100 % and a log line per try),
# and accept again once descriptors are free.
# Usage: fd_exhaustion_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1

# The sanitizers' runtime needs descriptors of its own: out of them, UBSan's
# checks misreport (an "invalid vptr" in Boost's error_category) and halt the
# process. This test runs in the plain pass only.
skip_if_sanitizer_build "$bin" "the sanitizers' runtime fails without free descriptors"

start_serve "$E2E_TMP/serve.log"
pid=${E2E_PIDS[-1]}
open_fds=$(ls "/proc/$pid/fd" | wc -l)
prlimit --pid "$pid" --nofile=$((open_fds + 8)):$((open_fds + 8))
check "serve answers before the flood" test "$(curl -s --cacert "$ca" "$url/healthz")" = ok

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
# 200 plain TCP connections held until the test is done measuring (or 30 s):
# the first few take the last descriptors (and wait in the TLS handshake),
# the rest wait in the backlog.
spawn "$E2E_TMP/flood.out" /usr/bin/python3 - "$port" "$E2E_TMP/release" <<'PY'
import os, socket, sys, time
held = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(200)]
print("connected", len(held), flush=True)
deadline = time.time() + 30
while time.time() < deadline and not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
PY
flood=$spawned
wait_for_log "$E2E_TMP/flood.out" "connected" 10
wait_for_log "$E2E_TMP/serve.log" "accept failed" 5
before=$(cpu_ticks)
sleep 2
used=$(( $(cpu_ticks) - before ))
echo "# serve used $used cpu ticks ($(getconf CLK_TCK)/s) in 2 s out of descriptors" >&2
check "out of descriptors it waits instead of spinning (< 0.3 s of cpu in 2 s)" \
  test "$used" -lt $(( $(getconf CLK_TCK) * 3 / 10 ))
check "and says so once, not per attempt" test "$(grep -c 'accept failed' "$E2E_TMP/serve.log")" -eq 1
touch "$E2E_TMP/release"
reap "$flood" || true
check "once descriptors are free it accepts and answers again" \
  bash -c "for i in \$(seq 50); do [ \"\$(curl -s -m 2 --cacert '$ca' '$url/healthz')\" = ok ] && exit 0; sleep 0.2; done; exit 1"
check "and logs the recovery" grep -q 'accepting connections again' "$E2E_TMP/serve.log"
finish

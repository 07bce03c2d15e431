#!/usr/bin/env bash
# docs/getting-started.md runs as pasted: its shell blocks, in order, in one
# shell, from the repository's root, with the real kubectl and curl. Only
# what cannot be shared with other tests running beside it is changed: the
# directory (/tmp/w), the ports (8443, 8081) and the binary's path. A block
# marked `watch-until="REGEX"` ends in a `kubectl ... -w` that an operator
# stops with Ctrl-C: here it is stopped once a line matches REGEX, and fails
# if none does within two minutes. Also checks that examples/worlds/README.md
# shows what `fedmetrics sim` prints.
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
. "$src/test/e2e/lib.sh"

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
serve_port=$(free_port)
control_port=$(free_port)
work="$E2E_TMP/w"

# The blocks, each preceded by its <!-- walkthrough: NAME [watch-until="REGEX"] --> marker.
/usr/bin/python3 - "$src/docs/getting-started.md" "$E2E_TMP/blocks" <<'PY'
import re, sys, pathlib
text = pathlib.Path(sys.argv[1]).read_text()
out = pathlib.Path(sys.argv[2]); out.mkdir()
blocks = re.findall(r'<!-- walkthrough: (\S+)(?: watch-until="([^"]*)")? -->\n```sh\n(.*?)```', text, re.S)
every = re.findall(r'```sh\n', text)
if len(blocks) != len(every):
    sys.exit(f"{len(every)} sh blocks, {len(blocks)} of them marked: every block of the walkthrough needs its marker")
for i, (name, until, body) in enumerate(blocks):
    (out / f"{i:02d}-{name}.sh").write_text(body)
    (out / f"{i:02d}-{name}.until").write_text(until)
PY
[ -n "$(ls "$E2E_TMP/blocks")" ] || { fail "docs/getting-started.md has no walkthrough blocks"; finish; }

# One script: the blocks in order, with the shared paths and ports moved;
# a block's `kubectl ... -w` line runs under watch_until.
script="$E2E_TMP/walkthrough.sh"
cat >"$script" <<PRELUDE
set -e
# A failed block leaves nothing running; after the last block (the stop block
# has signalled them) a second signal would cut their shutdown short.
trap '[ "\$walkthrough_done" = 1 ] || kill \$(jobs -p) 2>/dev/null || true' EXIT
cd "$src"
# watch_until REGEX COMMAND...: COMMAND's output until a line matches REGEX (120 s at most), then stops it.
watch_until() {
  local re=\$1; shift
  "\$@" >"$E2E_TMP/watch.out" 2>&1 & local pid=\$!
  local deadline=\$((SECONDS + 120))
  until grep -qE "\$re" "$E2E_TMP/watch.out"; do
    if [ \$SECONDS -ge \$deadline ] || ! kill -0 \$pid 2>/dev/null; then
      echo "watch never printed a line matching /\$re/:"; cat "$E2E_TMP/watch.out"; kill \$pid 2>/dev/null; return 1
    fi
    sleep 0.2
  done
  cat "$E2E_TMP/watch.out"; kill \$pid; wait \$pid 2>/dev/null || true
}
PRELUDE
for block in "$E2E_TMP"/blocks/*.sh; do
  until_re=$(cat "${block%.sh}.until")
  echo "echo '==> block $(basename "$block" .sh)'" >>"$script"
  sed -e "s#/tmp/w#$work#g" -e "s#build/fedmetrics#$bin#g" \
      -e "s#8443#$serve_port#g" -e "s#8081#$control_port#g" "$block" |
    if [ -n "$until_re" ]; then
      sed -E "s#^(kubectl .* -w)( .*)?\$#watch_until '$until_re' \\1#"
    else
      cat
    fi >>"$script"
done
echo "walkthrough_done=1" >>"$script"
grep -q 'watch_until' "$script" || fail "no watch in the walkthrough was bounded (a marker's watch-until lost its line?)"

# Its own session and process group: whatever the blocks leave running is stopped here.
spawn "$E2E_TMP/walkthrough.log" setsid bash "$script"
walk_pid=$spawned
deadline=$((SECONDS + 200))
while kill -0 $walk_pid 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.5; done
if kill -0 $walk_pid 2>/dev/null; then
  kill -- -$walk_pid 2>/dev/null
  reap $walk_pid || true
  fail "the walkthrough did not finish within 200 s"
  status=124
else
  reap $walk_pid && status=0 || status=$?
fi
cat "$E2E_TMP/walkthrough.log"
check "the walkthrough's blocks ran to the end, exit 0 (got $status)" test "$status" -eq 0
check "kubectl top pod printed nginx pods of the members" grep -qE '^nginx-[a-z0-9]+-[a-z0-9]+ +[0-9]+m' "$E2E_TMP/walkthrough.log"
check "the last block ran (each watch saw its line)" grep -q "==> block .*-stop" "$E2E_TMP/walkthrough.log"
# The stop block stops everything it started (serve drains for its 2 s shutdown delay first).
walkthrough_stopped() { ! pgrep -f -- "--out-dir $work" >/dev/null && ! pgrep -f -- "--cert-dir $work/serving" >/dev/null; }
check "nothing the walkthrough started is left running" wait_until 15 walkthrough_stopped
pkill -f -- "--out-dir $work" 2>/dev/null || true; pkill -f -- "--cert-dir $work/serving" 2>/dev/null || true

# examples/worlds/README.md shows what `fedmetrics sim` prints, line for line
# (ports as PORT, the out-dir as DIR, member names as NAME).
normalize() { sed -E -e "s#$work#DIR#g" -e 's#https://127.0.0.1:[0-9]+#https://127.0.0.1:PORT#' -e 's#^member [a-z0-9-]+ #member NAME #'; }
grep -v '^\[' "$work/sim.log" | normalize | uniq >"$E2E_TMP/printed"
/usr/bin/python3 - "$src/examples/worlds/README.md" >"$E2E_TMP/documented" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
block = re.search(r'and prints, for\n`nginx.yaml`:\n\n```\n(.*?)```', text, re.S).group(1)
for line in block.splitlines():
    print(re.sub(r'^member [a-z0-9-]+ ', 'member NAME ', line))
PY
uniq "$E2E_TMP/documented" >"$E2E_TMP/documented.u"
check "examples/worlds/README.md shows the simulator's output" diff "$E2E_TMP/documented.u" "$E2E_TMP/printed"
finish

#!/usr/bin/env bash
# lib.sh's cleanup judges the processes a test starts: a background process
# that crashes, exits non-zero unasked, or leaves a sanitizer report in its
# log fails the test (the sanitizer pass sees `serve` and `sim` only through
# this). Each case is a small script sourcing lib.sh, run for its exit status.
# Usage: lib_cleanup_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
lib="$(cd "$(dirname "$0")" && pwd)/lib.sh"

# outcome BODY: runs BODY after sourcing lib.sh; prints its exit status and saves its output in $E2E_TMP/out.
outcome() {
  local status=0
  bash -c "source '$lib'; $1" >"$E2E_TMP/out" 2>&1 || status=$?
  echo "$status"
}
said() { grep -q -- "$1" "$E2E_TMP/out"; }

check "a process still running at exit is stopped by SIGTERM: passes" \
  test "$(outcome 'spawn "$E2E_TMP/p.log" sleep 30')" = 0
check "a process that handles SIGTERM and exits 0: passes" \
  test "$(outcome 'spawn "$E2E_TMP/p.log" bash -c "trap \"exit 0\" TERM; sleep 30 & wait"; sleep 0.2')" = 0
check "a process the test stopped with SIGKILL: passes" \
  test "$(outcome 'spawn "$E2E_TMP/p.log" sleep 30; stop "$spawned" KILL')" = 0
check "a process that died of SIGSEGV fails the test, named" \
  test "$(outcome 'spawn "$E2E_TMP/p.log" bash -c "kill -SEGV \$\$"; sleep 0.2')" = 1
check "  and the output says SIGSEGV" said 'killed by SIGSEGV'
check "a process that exited 3 unasked fails the test" \
  test "$(outcome 'spawn "$E2E_TMP/p.log" sh -c "exit 3"; sleep 0.2')" = 1
check "  and the output says exit status 3" said 'exit status 3'
check "a process whose status the test reaped and judged: passes" \
  test "$(outcome 'spawn "$E2E_TMP/p.log" sh -c "exit 3"; reap "$spawned" || test $? = 3')" = 0
report='==4242==ERROR: LeakSanitizer: detected memory leaks'
check "a LeakSanitizer report in a log fails the test, though the process exited 0" \
  test "$(outcome "spawn \"\$E2E_TMP/p.log\" sh -c 'echo \"$report\"; sleep 30'; sleep 0.2")" = 1
check "  and the report is printed" said "$report"
check "an UBSan runtime error in any file of the test fails it" \
  test "$(outcome "echo 'src/x.cpp:1:2: runtime error: signed integer overflow' >\"\$E2E_TMP/out.txt\"")" = 1
check "a skip exits 77" test "$(outcome 'skip "not here"')" = 77
check "a skip with a sanitizer report is a failure" \
  test "$(outcome "spawn \"\$E2E_TMP/p.log\" sh -c 'echo \"$report\"'; sleep 0.2; skip 'not here'")" = 1
check "a failed test stays failed (status 1, not the skip's 77)" \
  test "$(outcome 'fail x; skip "not here"')" = 1
rm -f "$E2E_TMP/out"  # it holds the reports printed above: not ours
finish

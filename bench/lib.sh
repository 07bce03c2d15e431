# Shared by the bench scripts (sourced): waiting on a process's log and
# stopping the processes a script started. The caller defines fail().

# wait_for FILE PATTERN SECONDS: until FILE says PATTERN; otherwise its last
# lines and fail.
wait_for() {
  local i
  for i in $(seq $(($3 * 10))); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  tail -50 "$1" >&2
  fail "timed out waiting for '$2' in $1"
}

# stop_pids PID...: SIGTERM to each, up to 3 s to exit, then SIGKILL; reaps them.
stop_pids() {
  local pid
  for pid in "$@"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
  for pid in "$@"; do
    [ -n "$pid" ] || continue
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}

# Shared by the bench scripts (sourced): where the binary is, waiting on a
# process's log, stopping the processes a script started, starting a
# simulated world and a `fedmetrics serve` over it, reading a process's
# memory, cpu and fds, and the figures a script hands to bench/scale.sh. The
# caller defines fail() or calls bench_init; start_world, member_url and
# start_serve also use the caller's $fedmetrics (the binary), $tmp (its temp
# dir), $path (the query they wait on) and the array pids (what the caller
# stops on exit).

# The tree these scripts are in.
bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# bench_build_dir [BUILD_DIR]: sets build_dir (BUILD_DIR, by default build/,
# a relative one taken from the tree's root) and fedmetrics (its binary).
bench_build_dir() {
  build_dir=${1:-build}
  case "$build_dir" in /*) ;; *) build_dir="$bench_root/$build_dir" ;; esac
  fedmetrics=$build_dir/fedmetrics
}
# need_fedmetrics NAME: exits 1 (NAME: where it looked) when $fedmetrics is
# not an executable.
need_fedmetrics() {
  [ -x "$fedmetrics" ] || { echo "$1: $fedmetrics not found; build first (bash scripts/build.sh)" >&2; exit 1; }
}

# bench_result KEY=VALUE...: the figures a script measured, for bench/scale.sh:
# one KEY=VALUE a line, appended to the file named by $BENCH_RESULTS when it
# is set; nothing otherwise. Values are single words (a number, "timeout").
bench_result() {
  [ -n "${BENCH_RESULTS:-}" ] || return 0
  printf '%s\n' "$@" >>"$BENCH_RESULTS"
}

# bench_init NAME KEEP: a temp dir in $tmp (/tmp/fedmetrics-NAME.*), and
# the array pids; on exit every pid in it is stopped and the temp dir removed
# (kept, and its path printed, when KEEP is 1). Defines log (elapsed seconds
# and a message on stderr) and fail (NAME: message, exit 1).
bench_init() {
  bench_name=$1 bench_keep=${2:-0}
  tmp=$(mktemp -d "/tmp/fedmetrics-$1.XXXXXX")
  pids=()
  bench_started=$(date +%s)
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}
bench_cleanup() {
  stop_pids "${pids[@]:-}"
  if [ "$bench_keep" = 1 ]; then echo "$bench_name: logs kept in $tmp" >&2; else rm -rf "$tmp"; fi
}
log() { echo "==> [$(($(date +%s) - bench_started))s] $*" >&2; }
fail() {
  echo "$bench_name: $*" >&2
  exit 1
}

# wait_for FILE PATTERN SECONDS [PID]: until FILE says PATTERN; otherwise (or
# as soon as PID, the process writing FILE, has exited) its last lines and fail.
wait_for() {
  local i
  for i in $(seq $(($3 * 10))); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    if [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null; then
      grep -q "$2" "$1" 2>/dev/null && return 0
      tail -50 "$1" >&2
      fail "the process writing $1 exited before it said '$2'"
    fi
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

# start_world NAME WORLD_FILE: a `fedmetrics sim` in $tmp/NAME, its log in
# $tmp/NAME.log; sets world_pid.
start_world() {
  "$fedmetrics" sim --world "$2" --out-dir "$tmp/$1" >"$tmp/$1.log" 2>&1 &
  world_pid=$!
  pids+=("$world_pid")
  wait_for "$tmp/$1.log" "world ready" 30 "$world_pid"
}
member_url() { # WORLD MEMBER
  echo "$(grep -o "member $2 serving on https://127.0.0.1:[0-9]*" "$tmp/$1.log" | sed 's/.* on //')$path"
}
control_url() { # WORLD: the simulator's control API (faults, loads)
  grep -o 'control serving on https://127.0.0.1:[0-9]*' "$tmp/$1.log" | head -1 | sed 's/control serving on //'
}

# launch_serve NAME WORLD [serve flags...]: a `fedmetrics serve` over WORLD's
# members (no authentication, a self-signed certificate), its log in
# $tmp/NAME.log; waits until it listens and sets serve_pid and serve_base
# (its https://127.0.0.1:PORT).
launch_serve() {
  local name=$1 world=$2
  shift 2
  "$fedmetrics" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$tmp/$name.certs" \
    --insecure-development-no-auth --member-kubeconfig "$tmp/$world/members.kubeconfig" "$@" \
    >"$tmp/$name.log" 2>&1 &
  serve_pid=$!
  pids+=("$serve_pid")
  wait_for "$tmp/$name.log" "serving on https://" 30 "$serve_pid"
  serve_base=$(grep -o 'serving on https://127.0.0.1:[0-9]*' "$tmp/$name.log" | head -1 | sed 's/serving on //')
}

# start_serve NAME WORLD [serve flags...]: launch_serve, then waits until the
# pods query answers 200 from every member (no Warning header) and sets
# serve_url to that query's URL.
start_serve() {
  local name=$1
  launch_serve "$@"
  local url=$serve_base$path
  for _ in $(seq 100); do
    if curl -sk -o /dev/null -D "$tmp/$name.headers" -w '%{http_code}' "$url" | grep -q 200 &&
      ! grep -qi '^warning:' "$tmp/$name.headers"; then
      serve_url=$url
      return 0
    fi
    sleep 0.2
  done
  cat "$tmp/$name.log" "$tmp/$name.headers" >&2
  fail "$name: $url did not answer 200 from every member"
}

# start_serve_idle NAME WORLD [serve flags...]: launch_serve, then waits until
# /readyz answers 200 (a member discovered) and a second more for the
# others' discovery, without a metrics query: what it holds then is its idle
# memory.
start_serve_idle() {
  local name=$1 code=
  launch_serve "$@"
  for _ in $(seq 300); do
    code=$(curl -sk -o /dev/null -w '%{http_code}' --max-time 5 "$serve_base/readyz" || true)
    [ "$code" = 200 ] && break
    alive "$serve_pid" "$tmp/$name.log" "serve"
    sleep 0.1
  done
  [ "$code" = 200 ] || fail "$name: /readyz did not turn 200 within 30 s"
  sleep 1  # discovery of the other members, so that idle means idle
}

# kib PID FIELD: a /proc/PID/status figure in KiB (VmRSS, VmHWM; Threads is a count).
kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
# ticks PID: the cpu PID has used, utime+stime in clock ticks (getconf
# CLK_TCK a second; fields 14 and 15, counted after the ")" of its name).
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
# open_fds PID: how many file descriptors PID has open.
open_fds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# alive PID LOG WHAT: fails with LOG's tail when PID has exited.
alive() { kill -0 "$1" 2>/dev/null || { tail -50 "$2" >&2; fail "$3 exited (log above)"; }; }

# median NUMBER...: the middle one (the lower middle of an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# to_ms VALUE_WITH_UNIT: wrk's latency (us, ms or s) in milliseconds.
to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) ; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'; }

#!/usr/bin/env bash
# End to end: `fedmetrics cron next` (docs/cron.md): firing times in two zones across
# daylight-saving changes, the CRON_TZ= prefix winning over --time-zone,
# --count and its default, @every from --from, exit 2 with the parse error for
# a bad schedule, zone or --from or for a schedule that never fires, and --help.
# Usage: cron_next_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1

# run ARGS...: `fedmetrics cron next ARGS...`, output in $out/$err, status in $rc.
run() {
  set +e
  "$bin" cron next "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err"
  rc=$?
  set -e
  out=$(cat "$E2E_TMP/out")
  err=$(cat "$E2E_TMP/err")
}
lines() { printf '%s\n' "$@"; }

# Europe/Berlin across spring forward (2026-03-29 02:00 -> 03:00): 02:30 does not fire that day.
run "30 2 * * *" --time-zone Europe/Berlin --from 2026-03-28T00:00:00Z --count 3
check "Berlin spring forward: exit 0 (rc $rc, $err)" test "$rc" -eq 0
check "Berlin spring forward: the skipped 02:30 does not fire ($out)" test "$out" = "$(lines \
  2026-03-28T02:30:00+01:00 2026-03-30T02:30:00+02:00 2026-03-31T02:30:00+02:00)"

# America/New_York across fall back (2026-11-01 02:00 EDT -> 01:00 EST): 01:30 fires once.
run "30 1 * * *" --time-zone America/New_York --from 2026-10-31T12:00:00Z --count 2
check "New York fall back: the repeated 01:30 fires once, at its first occurrence ($out)" test "$out" = "$(lines \
  2026-11-01T01:30:00-04:00 2026-11-02T01:30:00-05:00)"

# The prefix wins over --time-zone (Australia/Sydney: 2026-10-04 02:00 -> 03:00).
run "CRON_TZ=Australia/Sydney 30 2 * * *" --time-zone Europe/Berlin --from 2026-10-02T00:00:00Z --count 2
check "CRON_TZ= wins over --time-zone ($out)" test "$out" = "$(lines \
  2026-10-03T02:30:00+10:00 2026-10-05T02:30:00+11:00)"
run "TZ=America/New_York 0 9 * * 1-5" --from 2026-01-02T00:00:00Z --count 2
check "TZ= prefix, weekdays ($out)" test "$out" = "$(lines 2026-01-02T09:00:00-05:00 2026-01-05T09:00:00-05:00)"

# Default count 5, default zone UTC.
run "@hourly" --from 2026-01-01T00:00:00Z
check "default: 5 times in UTC ($out)" test "$out" = "$(lines 2026-01-01T01:00:00Z 2026-01-01T02:00:00Z \
  2026-01-01T03:00:00Z 2026-01-01T04:00:00Z 2026-01-01T05:00:00Z)"
run "0 0 29 2 *" --from 2096-01-01T00:00:00Z --count 2
check "29 February skips 2100 ($out)" test "$out" = "$(lines 2096-02-29T00:00:00Z 2104-02-29T00:00:00Z)"

# @every counts from --from.
run "@every 90m" --from 2026-01-01T00:00:00Z --count 3
check "@every 90m from --from ($out)" test "$out" = "$(lines 2026-01-01T01:30:00Z 2026-01-01T03:00:00Z 2026-01-01T04:30:00Z)"

# Without --from: after now.
now=$(date -u +%s)
run "* * * * *" --count 2
first=$(printf '%s\n' "$out" | head -n 1)
check "without --from: two minutes after now ($out)" python3 -c "
import sys, datetime
lines = sys.argv[1].splitlines()
first = datetime.datetime.fromisoformat(lines[0].replace('Z', '+00:00')).timestamp()
sys.exit(0 if len(lines) == 2 and $now < first <= $now + 61 else 1)" "$out"

# A schedule that never fires is as useless as one that does not parse: exit
# 2, nothing printed, the reason on stderr.
run "0 0 31 2 *" --from 2026-01-01T00:00:00Z
check "31 February never fires: exit 2 (rc $rc), nothing printed" test "$rc" -eq 2 -a -z "$out"
check "and says so, naming the schedule ($err)" test "$err" = \
  'fedmetrics cron next: schedule "0 0 31 2 *" never fires: no time matches it within 30 years after 2026-01-01T00:00:00Z'
run "TZ=Europe/Berlin 0 0 30 2 *"
check "30 February, with a zone and without --from: exit 2 (rc $rc), nothing printed" test "$rc" -eq 2 -a -z "$out"
check "and says so ($err)" grep -qF 'schedule "TZ=Europe/Berlin 0 0 30 2 *" never fires' "$E2E_TMP/err"

# Bad input: exit 2, the parse error on stderr, nothing on stdout.
run "0 0 13 *"
check "bad schedule: exit 2 (rc $rc)" test "$rc" -eq 2
check "bad schedule: the documented message ($err)" grep -qF 'invalid schedule "0 0 13 *": expected 5 fields, found 4' "$E2E_TMP/err"
check "bad schedule: nothing on stdout" test -z "$out"
run "0 0 * * 8"
check "day of week 8: exit 2 and the field named ($err)" test "$rc" -eq 2 -a "$err" = \
  'fedmetrics cron next: invalid schedule "0 0 * * 8": day of week: value 8 out of range 0-7'
run "0 * * * *" --time-zone Mars/Olympus
check "bad --time-zone: exit 2 ($err)" test "$rc" -eq 2
check "bad --time-zone: named" grep -qF 'unknown time zone "Mars/Olympus"' "$E2E_TMP/err"
run "CRON_TZ=Mars/Olympus 0 * * * *"
check "bad CRON_TZ=: exit 2 and named ($err)" test "$rc" -eq 2 -a "$err" = \
  'fedmetrics cron next: invalid schedule "CRON_TZ=Mars/Olympus 0 * * * *": unknown time zone "Mars/Olympus"'
run "0 * * * *" --from yesterday
check "bad --from: exit 2 ($err)" test "$rc" -eq 2
check "bad --from: named" grep -qF -- '--from' "$E2E_TMP/err"
run "0 * * * *" --count 0
check "--count 0: exit 2 ($err)" test "$rc" -eq 2
run
check "no schedule: exit 2" test "$rc" -eq 2

# --help explains every flag.
run --help
check "cron next --help: exit 0" test "$rc" -eq 0
for flag in SCHEDULE --time-zone --from --count; do
  check "cron next --help mentions $flag" grep -qF -- "$flag" "$E2E_TMP/out"
done
set +e
"$bin" cron --help >"$E2E_TMP/cron_help" 2>&1
rc=$?
set -e
check "cron --help: exit 0 and lists next" test "$rc" -eq 0 -a -n "$(grep -F next "$E2E_TMP/cron_help")"

finish

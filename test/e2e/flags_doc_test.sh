#!/usr/bin/env bash
# docs/flags.md is the program's --help, every subcommand's, as
# scripts/gen-flags-doc.sh writes it: the check passes on the page, and fails
# on a stale copy (a flag missing, a subcommand missing), printing the
# difference and the command that regenerates the page.
# Usage: flags_doc_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2
gen=$src/scripts/gen-flags-doc.sh

# check_page PAGE: runs the check on PAGE; output in $out, status in $rc.
check_page() {
  set +e
  out=$(bash "$gen" --check "$bin" "$1" 2>&1)
  rc=$?
  set -e
}

check_page "$src/docs/flags.md"
if [ "$rc" -eq 0 ]; then
  pass "docs/flags.md matches --help"
else
  fail "docs/flags.md is stale:"$'\n'"$out"
fi

# Every command the program has is on the page (the generator walks the
# Subcommands: lists, so one added later is found without editing the script).
for heading in "fedmetrics serve" "fedmetrics sim" "fedmetrics simulate" "fedmetrics cron next" \
               "kubectl fedmetrics top pod" "kubectl fedmetrics top node"; do
  check "docs/flags.md has a section for $heading" grep -qx "## $heading" "$src/docs/flags.md"
done
check "docs/flags.md has serve's --member-timeout" grep -q -- '--member-timeout' "$src/docs/flags.md"

# A stale page is caught: a flag line removed, then a whole section removed.
grep -v -- '--member-timeout' "$src/docs/flags.md" >"$E2E_TMP/no-flag.md"
check_page "$E2E_TMP/no-flag.md"
check "a page missing a flag fails the check (rc $rc)" test "$rc" -eq 1
check "the failure shows the missing flag" grep -q -- '^+.*--member-timeout' <<<"$out"
check "the failure says how to regenerate the page" grep -qF "bash scripts/gen-flags-doc.sh $bin > $E2E_TMP/no-flag.md" <<<"$out"

awk '/^## fedmetrics cron next$/ { skip = 1 } /^## kubectl fedmetrics$/ { skip = 0 } !skip' \
  "$src/docs/flags.md" >"$E2E_TMP/no-section.md"
check_page "$E2E_TMP/no-section.md"
check "a page missing a subcommand fails the check (rc $rc)" test "$rc" -eq 1

finish

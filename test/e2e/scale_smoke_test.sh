#!/usr/bin/env bash
# bench/scale.sh in miniature: 3 members, 30 Deployments, 20 pods a member,
# 20 FederatedHPAs on a 2 s sync period, --quick. It runs every bench script
# behind the scale table (sim_scale.sh, big_answer.sh, fhpa_scale.sh,
# dead_member.sh) at these sizes; this checks that the table is whole and
# well-formed (every figure measured, with its target and a verdict), that
# nothing of theirs is left behind, and how scale.sh and big_answer.sh refuse
# what they cannot measure. The figures themselves are not judged: this
# machine's load moves them.
# Usage: scale_smoke_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2
scale() { timeout 100 bash "$src/bench/scale.sh" "$@"; }

status=0
scale --members 3 --deployments 30 --pods-per-member 20 --fhpas 20 --sync-period 2 --quick "$(dirname "$bin")" \
  >"$E2E_TMP/table" 2>"$E2E_TMP/err" || status=$?
check "scale.sh exited 0 ($status)" test "$status" = 0
[ "$status" = 0 ] || tail -30 "$E2E_TMP/err"
table=$E2E_TMP/table
cat "$table"
check "it names the date, the tree and the cores" \
  grep -qE '^fedmetrics scale, [0-9-]+T[0-9:]+Z, tree [0-9a-f]+(-dirty)?, [0-9]+ cores' "$table"
check "it says the sizes are not the targets'" grep -q "^(not the targets' sizes" "$table"
check "one markdown table" test "$(grep -c '^| figure | value | target | |$' "$table")" = 1
rows=$(grep '^| ' "$table" | grep -v '^| figure |')
check "every row has four cells" test -z "$(awk -F'|' 'NF != 6' <<<"$rows")"
check "every figure was measured" test -z "$(grep 'not measured' <<<"$rows" || true)"
num='[0-9]+(\.[0-9]+)?'
# row FIGURE_PATTERN VALUE_PATTERN TARGET: a row of the table, its verdict PASS or FAIL.
row() { grep -qE "^\| $1 \| $2 \| $3 \| (PASS|FAIL) \|$" <<<"$rows"; }
check "the simulator's start at 30 Deployments, and its cpu" \
  row "simulator start, 3 members x 30 Deployments" "$num ms \($num ms of cpu\)" "< 5000 ms"
check "the simulator's start at 20 pods a member, and its cpu" \
  row "simulator start, 3 members x 20 pods" "$num ms \($num ms of cpu\)" "< 5000 ms"
check "the simulator's cpu for a pod list" row "simulator cpu, one member's pod list of 20 pods" "$num ms" "< 10 ms"
check "the simulator's cpu for a pod-metrics list" \
  row "simulator cpu, one member's pod-metrics list of 20 pods" "$num ms" "< 10 ms"
check "serve's cpu per query, with the answer's size" \
  row "serve cpu per pods query over 3 x 20 pods \(60 pods, a $num KiB answer\)" "$num ms" "<= 100 ms"
check "serve's peak growth against the answer" \
  row "serve peak resident growth during that query / the answer's size" "$num \($num MiB over $num MiB idle\)" "<= 1.5"
check "the query's wall time" grep -qE "^\| that query's wall time .* \| $num ms \(simulator $num ms\) \| \| \|$" <<<"$rows"
check "the loop's cpu" row "loop, 20 FederatedHPAs over 3 members every 2 s: serve cpu, fraction of one core" "$num" "<= 0.5"
check "the loop's memory" row "loop: serve peak resident \(VmHWM\)" "$num MiB" "<= 300 MiB"
check "the loop's longest gap between syncs" \
  row "loop: longest interval between two syncs of one FederatedHPA, in periods" "$num \($num s\)" "<= 1.5"
check "the loop's member requests per sync" grep -qE "^\| loop: member requests per sync \| $num \| \| \|$" <<<"$rows"
check "the dead member's p50 ratio" \
  row "dead member \(1 of 10 black-holed\): merged p50 / healthy p50" "$num \($num / $num ms\)" "<= 1.2"
check "the first queries after it stopped answering" \
  grep -qE "^\| dead member: the first five queries .* \| ($num/){4}$num \| \| \|$" <<<"$rows"
check "nothing else" test "$(wc -l <<<"$rows")" = 13
for name in scale simscale bigans fhpa_scale dead-member; do
  dir=$(grep -o "temp dir /tmp/fedmetrics-$name\.[^ ]*" "$E2E_TMP/err" | awk '{ print $3 }')
  check "$name: its temp dir (${dir:-none found}) was removed" test -n "$dir" -a ! -e "${dir:-/nonexistent}"
  check "$name: no process of its left behind" test -z "$(pgrep -f "${dir:-/nonexistent}/" || true)"
done

# What it cannot measure, or is not asked right, is an error, never a row of blanks.
status=0
scale --help >"$E2E_TMP/help" 2>&1 || status=$?
check "--help exits 0 ($status) and lists the sizes" grep -q -- "--pods-per-member N" "$E2E_TMP/help"
status=0
scale --fhpas many >/dev/null 2>"$E2E_TMP/bad.err" || status=$?
check "a size that is not a number exits 2 ($status)" test "$status" = 2
check "and says why" grep -q -- "--fhpas must be a positive whole number, not 'many'" "$E2E_TMP/bad.err"
status=0
scale --quick "$E2E_TMP/no-build" >/dev/null 2>"$E2E_TMP/missing.err" || status=$?
check "without a fedmetrics binary it exits 1 ($status)" test "$status" = 1
check "and says where it looked" grep -q "no-build/fedmetrics not found" "$E2E_TMP/missing.err"
status=0
BIG_SIZES="3by50" timeout 20 bash "$src/bench/big_answer.sh" "$(dirname "$bin")" >/dev/null 2>&1 || status=$?
check "big_answer.sh: a size that is not MEMBERSxPODS exits 1 ($status)" test "$status" = 1
finish

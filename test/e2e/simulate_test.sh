#!/usr/bin/env bash
# End to end: `fedmetrics simulate` on the shipped scenarios and on broken files.
# Usage: simulate_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

for scenario in "$src"/examples/scenarios/*.json; do
  name=$(basename "$scenario")
  set +e
  "$bin" simulate "$scenario" >"$E2E_TMP/out.jsonl" 2>"$E2E_TMP/err.txt"
  rc=$?
  set -e
  check "$name: exit status 0" test "$rc" -eq 0
  check "$name: one JSON object per line" \
    python3 -c "import json,sys; [json.loads(l) for l in open(sys.argv[1])]" "$E2E_TMP/out.jsonl"
  # --explain: each step's decision, with the rule that bound it.
  "$bin" simulate --explain "$scenario" >"$E2E_TMP/explain-$name.txt"
  steps=$(wc -l <"$E2E_TMP/out.jsonl")
  check "$name --explain: one decision per step ($steps)" \
    test "$(grep -c '^Step [0-9]* at ' "$E2E_TMP/explain-$name.txt")" = "$steps"
  check "$name --explain: each says what bound it" \
    test "$(grep -c '^Bound by:     [A-Za-z-]' "$E2E_TMP/explain-$name.txt")" = "$steps"
done
# What --explain shows: a scale-down policy's limit with its numbers, and a
# member whose pods could not be read.
check "scale-down-policies --explain: a ScaleDownLimit with each policy's limit" \
  grep -qE '^Bound by: +ScaleDownLimit: at least [0-9]+ by the scaleDown policies, selectPolicy [A-Za-z]+ of [A-Za-z]+ [0-9]+ per [0-9]+ s \([0-9]+\)' \
  "$E2E_TMP/explain-scale-down-policies.json.txt"
check "several-members-incomplete-data --explain: the unread member's replicas as missing pods" \
  grep -qE '^Unread: +member[0-9]+: its pods could not be read; its [0-9]+ placed replicas count as missing pods$' \
  "$E2E_TMP/explain-several-members-incomplete-data.json.txt"

# The Karmada nginx walkthrough: from 1 replica up to 10 under load, back to 1 after.
"$bin" simulate "$src/examples/scenarios/karmada-nginx-cpu.json" >"$E2E_TMP/nginx.jsonl"
replicas=$(python3 -c "import json,sys; print([json.loads(l)['desiredReplicas'] for l in open(sys.argv[1])])" "$E2E_TMP/nginx.jsonl")
check "nginx walkthrough reaches 10 replicas ($replicas)" python3 -c "import sys; r=eval(sys.argv[1]); sys.exit(0 if max(r)==10 else 1)" "$replicas"
check "nginx walkthrough ends at 1 replica ($replicas)" python3 -c "import sys; r=eval(sys.argv[1]); sys.exit(0 if r[-1]==1 else 1)" "$replicas"

# Scale to zero: the example starts from a zero of its own (ScaledToZero=True
# on its status) and writes the condition at each scale; the same without the
# condition is an operator's zero, left alone.
"$bin" simulate "$src/examples/scenarios/external-queue-scale-to-zero.json" >"$E2E_TMP/zero.jsonl"
zero=$(python3 -c "import json,sys; print([[c['reason'] for c in json.loads(l)['conditions'] if c['type']=='ScaledToZero'] for l in open(sys.argv[1])])" "$E2E_TMP/zero.jsonl")
check "ScaledToZero on each step ($zero)" test "$zero" = "[['ScaledToZero'], ['NotScaledToZero'], ['NotScaledToZero'], ['ScaledToZero'], ['NotScaledToZero']]"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['hpa'].pop('status'); json.dump(d, open(sys.argv[2], 'w'))" \
  "$src/examples/scenarios/external-queue-scale-to-zero.json" "$E2E_TMP/manual-zero.json"
manual=$("$bin" simulate "$E2E_TMP/manual-zero.json" | python3 -c "import json,sys; print([json.loads(l)['desiredReplicas'] for l in sys.stdin])")
check "a manual zero stays at zero ($manual)" test "$manual" = "[0, 0, 0, 0, 0]"

# Pod-level requests: 80m of a pod's 400m is 20 % (of its container's 100m, 80 %).
printf '%s' '{"hpa":{"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web","apiVersion":"apps/v1"},"maxReplicas":10,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}]}},"steps":[{"at":0,"replicas":1,"pods":[{"name":"web-1","resources":{"requests":{"cpu":"400m"}},"containers":[{"name":"app","requests":{"cpu":"100m"}}],"usage":{"cpu":"80m"}}]}]}' >"$E2E_TMP/pod-level.json"
utilization=$("$bin" simulate "$E2E_TMP/pod-level.json" | python3 -c "import json,sys; print(json.loads(sys.stdin.readline())['currentMetrics'][0]['resource']['current']['averageUtilization'])")
check "pod-level requests are the denominator ($utilization %)" test "$utilization" = 20

# Broken files: exit 2, the field named on stderr, nothing on stdout.
printf '%s' '{"hpa":{"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web","apiVersion":"apps/v1"},"maxReplicas":"ten","metrics":[]}},"steps":[{"at":0,"replicas":1}]}' >"$E2E_TMP/bad.json"
set +e
"$bin" simulate "$E2E_TMP/bad.json" >"$E2E_TMP/bad.out" 2>"$E2E_TMP/bad.err"
rc=$?
set -e
check "a mistyped field exits 2" test "$rc" -eq 2
check "and names the field" grep -q "maxReplicas" "$E2E_TMP/bad.err"
check "and prints nothing on stdout" test ! -s "$E2E_TMP/bad.out"
printf '%s' '{"hpa": ' >"$E2E_TMP/truncated.json"
set +e
"$bin" simulate "$E2E_TMP/truncated.json" >/dev/null 2>"$E2E_TMP/trunc.err"
rc=$?
set -e
check "truncated JSON exits 2" test "$rc" -eq 2
set +e
"$bin" simulate /nonexistent.json >/dev/null 2>"$E2E_TMP/missing.err"
rc=$?
set -e
check "a missing file exits 2 naming it" bash -c "[ $rc -eq 2 ] && grep -q /nonexistent.json '$E2E_TMP/missing.err'"
check "simulate --help" bash -c "'$bin' simulate --help | grep -q SCENARIO"
finish

#!/usr/bin/env bash
# End to end: `fedmetrics simulate` with "mode": "distributed"
# (docs/simulate.md) on the shipped example and on broken files.
# Usage: simulate_distributed_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2
example="$src/examples/scenarios/distributed-rebalance.json"

set +e
"$bin" simulate "$example" >"$E2E_TMP/out.jsonl" 2>"$E2E_TMP/err.txt"
rc=$?
set -e
check "the example exits 0" test "$rc" -eq 0
check "with nothing on stderr" test ! -s "$E2E_TMP/err.txt"
# expected/distributed-rebalance.jsonl was written from the program's own
# output: it pins the lines (messages included) against regressions, but on
# its own it would only show the code agrees with itself. What backs it:
# steps 0 and 300 are the documented example (checked below on their own);
# steps 600 to 1800 are derived by hand from the distributed mode rules, in
# the table below (each entry says which rule gives it); and every step is
# checked against the invariants.
check "the example prints exactly the expected lines" \
  diff -u "$src/test/e2e/expected/distributed-rebalance.jsonl" "$E2E_TMP/out.jsonl"
check "steps 600 to 1800 as derived by hand from the rules" python3 - "$E2E_TMP/out.jsonl" <<'PY'
import json, sys
# at: ({member: (min, max, action)}, moves, currentReplicas, ScalingActive reason)
by_hand = {
    # member4 joins: max(1, floor(9 / 4)) = 2, from the largest spare: member1's
    # 6 - max(1, 4, 4) = 2 (its scale at 400 is older than the 120 s window;
    # member2 has 1 - 1 = 0, member3 2 - 1 = 1). Mins again: max(2, 4) = 4, 1 each.
    600: ({"member1": (1, 4, "update"), "member2": (1, 1, "none"), "member3": (1, 2, "none"),
           "member4": (1, 2, "create")}, [("member1", "member4", 2)], 4 + 1 + 1 + 0, "ValidDistribution"),
    # maxReplicas 9 -> 13: the 4 go to the one receiver, member2 (pegged at 1 of 1).
    900: ({"member1": (1, 4, "none"), "member2": (1, 5, "update"), "member3": (1, 2, "none"),
           "member4": (1, 2, "none")}, [], 4 + 1 + 1 + 2, "ValidDistribution"),
    # member3 leaves: its 2 go to the one receiver, member4 (pegged at 2 of 2); mins again: 1 each.
    1200: ({"member1": (1, 4, "none"), "member2": (1, 5, "none"), "member3": (None, None, "delete"),
            "member4": (1, 4, "update")}, [], 4 + 5 + 2, "ValidDistribution"),
    # maxReplicas 2 < 3 members: InvalidDistribution, no member HPA written.
    1500: ({}, [], 11, "InvalidDistribution"),
    # maxReplicas 13 -> 9: 4 from spare, largest first, ties by name: member1
    # 4 - max(1, 2, 2) = 2, member4 4 - max(1, 2, 2) = 2 (member2: 5 - 5 = 0); a
    # lowering takes spare also within the rebalance window (member1 scaled at 1700).
    1800: ({"member1": (1, 2, "update"), "member2": (1, 5, "none"), "member4": (1, 2, "update")},
           [], 2 + 5 + 2, "ValidDistribution"),
}
lines = {l["at"]: l for l in map(json.loads, open(sys.argv[1]))}
for at, (members, moves, current, reason) in by_hand.items():
    line = lines[at]
    got = {k: (v.get("minReplicas"), v.get("maxReplicas"), v["action"]) for k, v in line["members"].items()}
    assert got == members, (at, got)
    assert [(m["from"], m["to"], m["maxReplicas"]) for m in line["moves"]] == moves, (at, line["moves"])
    assert (line["currentReplicas"], line["desiredReplicas"]) == (current, current), (at, line)
    active = [c["reason"] for c in line["conditions"] if c["type"] == "ScalingActive"]
    assert active == [reason], (at, active)
PY

# The invariants on every line, against the spec of that step.
check "every step: sum of max = maxReplicas, sum of min = max(minReplicas, n), 1 <= min <= max" python3 - "$example" "$E2E_TMP/out.jsonl" <<'PY'
import json, sys
scenario = json.load(open(sys.argv[1]))
spec = scenario["hpa"]["spec"]
for step, line in zip(scenario["steps"], open(sys.argv[2])):
    out = json.loads(line)
    spec = step.get("hpa", {}).get("spec", spec)
    live = {k: v for k, v in out["members"].items() if v["action"] != "delete"}
    if not live:
        assert any(c["reason"] == "InvalidDistribution" for c in out["conditions"]), out
        continue
    n = len(live)
    assert sum(v["maxReplicas"] for v in live.values()) == spec["maxReplicas"], out
    assert sum(v["minReplicas"] for v in live.values()) == max(spec.get("minReplicas", 1), n), out
    assert all(1 <= v["minReplicas"] <= v["maxReplicas"] for v in live.values()), out
PY

# The documented example alone, read from stdin.
python3 - "$example" >"$E2E_TMP/spec-example.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["steps"] = s["steps"][:2]
print(json.dumps(s))
PY
"$bin" simulate - <"$E2E_TMP/spec-example.json" >"$E2E_TMP/spec.jsonl"
check "the documented step at 300: member1 6, member2 1, member3 2, moves 2 and 1" python3 - "$E2E_TMP/spec.jsonl" <<'PY'
import json, sys
line = [json.loads(l) for l in open(sys.argv[1])][1]
assert {k: v["maxReplicas"] for k, v in line["members"].items()} == {"member1": 6, "member2": 1, "member3": 2}, line
assert line["moves"] == [{"from": "member2", "to": "member1", "maxReplicas": 2},
                         {"from": "member3", "to": "member1", "maxReplicas": 1}], line
PY

# Broken files: exit 2, the field named on stderr, nothing on stdout.
printf '%s' '{"mode":"distributed","hpa":{"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":9}},
  "steps":[{"at":0,"members":{"member1":{}}},{"at":15,"members":{"member1":{"currentReplicas":-2}}}]}' >"$E2E_TMP/bad.json"
set +e
"$bin" simulate "$E2E_TMP/bad.json" >"$E2E_TMP/bad.out" 2>"$E2E_TMP/bad.err"
rc=$?
set -e
check "a negative currentReplicas exits 2" test "$rc" -eq 2
check "and names the field" grep -q "steps\[1\].members.member1.currentReplicas: must be a non-negative integer" "$E2E_TMP/bad.err"
check "and prints nothing on stdout" test ! -s "$E2E_TMP/bad.out"
printf '%s' '{"mode":"distributd","steps":[]}' >"$E2E_TMP/mode.json"
set +e
"$bin" simulate "$E2E_TMP/mode.json" >/dev/null 2>"$E2E_TMP/mode.err"
rc=$?
set -e
check "an unknown mode exits 2 naming it" bash -c "[ $rc -eq 2 ] && grep -q '^mode: ' '$E2E_TMP/mode.err'"
finish

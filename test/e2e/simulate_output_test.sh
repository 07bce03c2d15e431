#!/usr/bin/env bash
# End to end: `fedmetrics simulate --output table` and `--plot FILE.svg|.png`
# on the shipped scenarios (centralized, distributed, cron).
# Usage: simulate_output_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2
scenarios="$src/examples/scenarios"

# --- --output table -----------------------------------------------------------
"$bin" simulate --output table "$scenarios/karmada-nginx-cpu.json" >"$E2E_TMP/nginx.txt"
cat "$E2E_TMP/nginx.txt"
check "table: a header and one row per step (7)" test "$(wc -l <"$E2E_TMP/nginx.txt")" -eq 8
check "table: the header names the members, the metric and the reason" \
  grep -Eq '^AT +REPLICAS +MIN-MAX +member1 +member2 +cpu +REASON$' "$E2E_TMP/nginx.txt"
check "table: 15s: 1 -> 5, cpu 1200% against 10%, limited by the scale-up policy" \
  grep -Eq '^15s +1->5 +1-10 +1 +- +1200%/10% +ScaleUpLimit$' "$E2E_TMP/nginx.txt"
check "table: 45s: 5 pods in each member, held at maxReplicas" \
  grep -Eq '^45s +10 +1-10 +5 +5 +[0-9]+%/10% +TooManyReplicas$' "$E2E_TMP/nginx.txt"
check "table: every column starts where its header does" python3 - "$E2E_TMP/nginx.txt" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
starts = [m.start() for m in re.finditer(r"(?:^|(?<=  ))\S", lines[0])]
for line in lines[1:]:
    for s in starts:
        assert line[s] != " " and (s == 0 or line[s - 1] == " "), (line, s)
    assert line == line.rstrip(), repr(line)
PY

"$bin" simulate -o table "$scenarios/distributed-rebalance.json" >"$E2E_TMP/dist.txt"
steps=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['steps']))" "$scenarios/distributed-rebalance.json")
check "table, distributed: one row per step ($steps)" test "$(wc -l <"$E2E_TMP/dist.txt")" -eq $((steps + 1))
check "table, distributed: at 300s member1 (3 replicas) gets max 6 from member2 and member3" \
  grep -Eq '^300s +5 +2-9 +3 \[1-6\] +1 \[1-1\] +1 \[1-2\] +- +ValidDistribution +move max 2 member2->member1; move max 1 member3->member1$' "$E2E_TMP/dist.txt"
check "table, distributed: member3 leaves at 1200s" grep -Eq '^1200s .* left .*delete member3$' "$E2E_TMP/dist.txt"

"$bin" simulate --output table "$scenarios/cron-business-hours.json" >"$E2E_TMP/cron.txt"
check "table, cron: the morning firing raises minReplicas to 20 and the replicas follow" \
  grep -Eq '^2026-11-23T08:00:00Z +2->20 +20-60 .*cron weekday-morning: min 20 max 60$' "$E2E_TMP/cron.txt"

"$bin" simulate "$scenarios/karmada-nginx-cpu.json" >"$E2E_TMP/default.jsonl"
check "json stays the default" \
  python3 -c "import json,sys; l=[json.loads(x) for x in open(sys.argv[1])]; assert len(l)==7 and l[1]['desiredReplicas']==5" "$E2E_TMP/default.jsonl"
"$bin" simulate --output json "$scenarios/karmada-nginx-cpu.json" >"$E2E_TMP/json.jsonl"
check "--output json prints the same lines" cmp -s "$E2E_TMP/default.jsonl" "$E2E_TMP/json.jsonl"
set +e
"$bin" simulate --output yaml "$scenarios/karmada-nginx-cpu.json" >"$E2E_TMP/yaml.out" 2>"$E2E_TMP/yaml.err"
rc=$?
set -e
check "--output yaml exits 2 with nothing on stdout" bash -c "[ $rc -eq 2 ] && [ ! -s '$E2E_TMP/yaml.out' ]"

# --- --plot -------------------------------------------------------------------
set +e
"$bin" simulate --plot "$E2E_TMP/nginx.svg" "$scenarios/karmada-nginx-cpu.json" >"$E2E_TMP/plot.out" 2>"$E2E_TMP/plot.err"
rc=$?
set -e
if grep -q "built without cairo" "$E2E_TMP/plot.err"; then
  # -DFEDMETRICS_PLOT=OFF: --plot is refused before anything is replayed.
  check "without cairo: --plot exits 1, saying so, and prints nothing" \
    bash -c "[ $rc -eq 1 ] && [ ! -s '$E2E_TMP/plot.out' ] && [ ! -e '$E2E_TMP/nginx.svg' ]"
  skip "built without cairo (-DFEDMETRICS_PLOT=OFF): the charts are not checked"
fi
check "--plot .svg exits 0" test "$rc" -eq 0
check "--plot still prints the JSON lines" cmp -s "$E2E_TMP/default.jsonl" "$E2E_TMP/plot.out"

# The SVG: XML with an <svg> root of 960 x 540, its <desc> one legend entry a
# line, and the drawing: one fill colour per member and metric, one stroke
# (colour, dash) per line: replicas, minReplicas, maxReplicas, cpu, cpu's
# target, the bounds and the target each with its own dash pattern.
check "svg: parses as XML and shows the nginx walkthrough's series" python3 - "$E2E_TMP/nginx.svg" <<'PY'
import re, sys
import xml.etree.ElementTree as ET
ns = {"svg": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
assert root.get("viewBox") == "0 0 960 540", root.get("viewBox")
assert "nginx" in root.find("svg:title", ns).text
series = [l for l in root.find("svg:desc", ns).text.splitlines() if l.strip()]
assert series == ["member1", "member2", "replicas", "minReplicas", "maxReplicas", "rescale (new count)", "cpu",
                  "cpu target (10%)"], series
fills, strokes, dashes = set(), set(), set()
defs = set(root.find("svg:defs", ns).iter())
for el in root.iter("{http://www.w3.org/2000/svg}path"):
    if el in defs:
        continue  # glyphs and clip paths
    style = dict(kv.split(":", 1) for kv in el.get("style", "").replace(" ", "").split(";") if ":" in kv)
    grey = lambda c: len(set(re.findall(r"[\d.]+", c))) == 1
    if style.get("stroke") == "none" and "fill" in style and not grey(style["fill"]):
        fills.add(style["fill"])
    if style.get("fill") == "none" and float(style.get("stroke-width", "1")) > 1:
        strokes.add((style["stroke"], "stroke-dasharray" in style))
        if "stroke-dasharray" in style:
            dashes.add(style["stroke-dasharray"])
assert len(fills) == 3, fills        # member1, member2, cpu's dots
assert len(strokes) == 5, strokes    # replicas, min, max, cpu, cpu target
assert len(dashes) == 3, dashes      # min, max and the target: no bound looks like a target
PY

"$bin" simulate --plot "$E2E_TMP/nginx.PNG" "$scenarios/karmada-nginx-cpu.json" >/dev/null
"$bin" simulate --plot "$E2E_TMP/dist.png" -o table "$scenarios/distributed-rebalance.json" >"$E2E_TMP/dist2.txt"
"$bin" simulate --plot "$E2E_TMP/cron.svg" "$scenarios/cron-business-hours.json" >/dev/null
for png in nginx.PNG dist.png; do
  check "$png: a PNG of 960 x 540 (signature, IHDR)" python3 - "$E2E_TMP/$png" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
length, kind, width, height = struct.unpack(">I4sII", data[8:24])
assert kind == b"IHDR" and (width, height) == (960, 540), (kind, width, height)
assert len(data) > 10000, len(data)  # a drawing, not a blank image
PY
done
check "--plot with --output table prints the table" cmp -s "$E2E_TMP/dist.txt" "$E2E_TMP/dist2.txt"
"$bin" simulate --plot "$E2E_TMP/several.svg" "$scenarios/several-members-incomplete-data.json" >/dev/null
check "several.svg: a Duplicated placement's pods, labelled so, beside the replicas" python3 - "$E2E_TMP/several.svg" <<'PY'
import sys
import xml.etree.ElementTree as ET
desc = ET.parse(sys.argv[1]).getroot().find("{http://www.w3.org/2000/svg}desc").text.split("\n")
assert {"member1 pods", "member2 pods", "member3 pods", "replicas", "rescale (new count)"} <= set(desc), desc
PY
"$bin" simulate --plot "$E2E_TMP/dist.svg" "$scenarios/distributed-rebalance.json" >/dev/null
check "dist.svg: the members' shares and where max moved" python3 - "$E2E_TMP/dist.svg" <<'PY'
import sys
import xml.etree.ElementTree as ET
desc = ET.parse(sys.argv[1]).getroot().find("{http://www.w3.org/2000/svg}desc").text.split("\n")
assert {"member1", "member4", "share not in use (lighter)", "maxReplicas moved to a member (from where)"} <= set(desc), desc
PY
check "cron.svg: members, bounds and the rescales" python3 - "$E2E_TMP/cron.svg" <<'PY'
import sys
import xml.etree.ElementTree as ET
desc = ET.parse(sys.argv[1]).getroot().find("{http://www.w3.org/2000/svg}desc").text.split("\n")
assert {"member1", "member2", "minReplicas", "maxReplicas", "rescale (new count)"} <= set(desc), desc
PY

# A file that is neither .svg nor .png: exit 2 naming the accepted ones,
# before anything is replayed or written.
set +e
"$bin" simulate --plot "$E2E_TMP/out.pdf" "$scenarios/karmada-nginx-cpu.json" >"$E2E_TMP/pdf.out" 2>"$E2E_TMP/pdf.err"
rc=$?
set -e
cat "$E2E_TMP/pdf.err"
check "--plot out.pdf exits 2" test "$rc" -eq 2
check "and names the file and the accepted extensions" \
  bash -c "grep -q 'out.pdf' '$E2E_TMP/pdf.err' && grep -q '\.svg' '$E2E_TMP/pdf.err' && grep -q '\.png' '$E2E_TMP/pdf.err'"
check "and prints and writes nothing" bash -c "[ ! -s '$E2E_TMP/pdf.out' ] && [ ! -e '$E2E_TMP/out.pdf' ]"
set +e
"$bin" simulate --plot "$E2E_TMP/no/such/dir/x.png" "$scenarios/karmada-nginx-cpu.json" >/dev/null 2>"$E2E_TMP/nodir.err"
rc=$?
set -e
check "a plot that cannot be written exits 1 naming the file and why" \
  bash -c "[ $rc -eq 1 ] && grep -q 'no/such/dir/x.png' '$E2E_TMP/nodir.err' && grep -q 'No such file or directory' '$E2E_TMP/nodir.err'"

# The image is written once, never read back: --plot works on a pipe (a FIFO
# named .svg here, as /dev/stdout would be), with its <title> and <desc>.
mkfifo "$E2E_TMP/pipe.svg"
spawn "$E2E_TMP/from-pipe.svg" timeout 20 cat "$E2E_TMP/pipe.svg"
reader=$spawned
set +e
timeout 20 "$bin" simulate --plot "$E2E_TMP/pipe.svg" "$scenarios/karmada-nginx-cpu.json" >/dev/null 2>"$E2E_TMP/pipe.err"
rc=$?
reap "$reader"
set -e
cat "$E2E_TMP/pipe.err"
check "--plot to a FIFO exits 0" test "$rc" -eq 0
check "and the reader gets the whole SVG with its description" python3 - "$E2E_TMP/from-pipe.svg" <<'PY'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert "nginx" in root.find("{http://www.w3.org/2000/svg}title").text
assert "member1" in root.find("{http://www.w3.org/2000/svg}desc").text
PY
finish

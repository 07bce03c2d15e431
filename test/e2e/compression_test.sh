#!/usr/bin/env bash
# End to end: a simulated member (and the simulated Karmada control plane)
# compresses its answers as kube-apiserver does (gzip over 128 KiB when the
# client accepts it), seen by curl on the wire; --compress-min-bytes 0 turns
# it off; the malformedGzip fault sends a gzip body that fails its check.
# Usage: compression_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1

# 300 pods on one member: the pod list is well over 128 KiB.
cat >"$E2E_TMP/world.yaml" <<'WORLD'
members:
  - name: big
    nodes: 1
workloads:
  - name: web
    replicas: 300
    containers:
      - name: web
        image: nginx
        resources:
          requests: {cpu: 10m, memory: 16Mi}
    propagation:
      clusters: [big]
WORLD

start_sim "$E2E_TMP/world.yaml"
member=$(grep -o 'member big serving on https://127.0.0.1:[0-9]*' "$E2E_TMP/sim.log" | sed 's/.* on //')
ca="$E2E_TMP/world/ca.crt"
token=fedmetrics-sim-token
# get PATH OUTPUT [CURL ARGS...]: the body into OUTPUT, the headers (lower-cased) into OUTPUT.headers.
get() {
  local path=$1 out=$2; shift 2
  curl -sS --max-time 10 --cacert "$ca" -H "Authorization: Bearer $token" -D "$out.headers.raw" -o "$out" "$@" \
    "$member$path"
  tr 'A-Z' 'a-z' <"$out.headers.raw" | tr -d '\r' >"$out.headers"
}
header() { grep -q "^$1\$" "$2.headers"; }
no_header() { ! grep -q "^$1:" "$2.headers"; }
same_json() { /usr/bin/python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' "$1" "$2"; }
# pod_names FILE: the names in a pod list, one line (a fault change bumps resourceVersions, not names).
pod_names() { /usr/bin/python3 -c 'import json,sys; print(" ".join(i["metadata"]["name"] for i in json.load(open(sys.argv[1]))["items"]))' "$1"; }

# The reference: no Accept-Encoding at all.
get /api/v1/pods "$E2E_TMP/plain"
check "without Accept-Encoding, the pod list is not compressed" no_header content-encoding "$E2E_TMP/plain"
plain_size=$(stat -c %s "$E2E_TMP/plain")
check "the pod list is over 128 KiB ($plain_size bytes)" test "$plain_size" -gt 131072
check "it is the 300 pods" test "$(pod_names "$E2E_TMP/plain" | wc -w)" = 300

# curl --compressed sends Accept-Encoding (deflate, gzip, ...) and inflates.
get /api/v1/pods "$E2E_TMP/compressed" --compressed
check "curl --compressed gets Content-Encoding: gzip" header "content-encoding: gzip" "$E2E_TMP/compressed"
check "and Vary: Accept-Encoding" header "vary: accept-encoding" "$E2E_TMP/compressed"
check "and the content type is still JSON" header "content-type: application/json" "$E2E_TMP/compressed"
check "the inflated body is the same JSON" same_json "$E2E_TMP/plain" "$E2E_TMP/compressed"

# The bytes on the wire: a gzip stream, its Content-Length, smaller than the JSON.
get /api/v1/pods "$E2E_TMP/raw" -H 'Accept-Encoding: gzip'
raw_size=$(stat -c %s "$E2E_TMP/raw")
check "the raw body is gzip (magic 1f 8b)" test "$(head -c 2 "$E2E_TMP/raw" | od -An -tx1 | tr -d ' ')" = 1f8b
check "Content-Length is the compressed size ($raw_size bytes)" header "content-length: $raw_size" "$E2E_TMP/raw"
check "compressed is under a quarter of the JSON" test $((raw_size * 4)) -lt "$plain_size"
check "gzip -d reads it back to the same JSON" \
  bash -c "gzip -dc <'$E2E_TMP/raw' >'$E2E_TMP/raw.json' && /usr/bin/python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' '$E2E_TMP/plain' '$E2E_TMP/raw.json'"

# HEAD: GET's headers, no body.
get /api/v1/pods "$E2E_TMP/head" -I -H 'Accept-Encoding: gzip'
check "HEAD says gzip" header "content-encoding: gzip" "$E2E_TMP/head"
check "HEAD's Content-Length is GET's compressed length" header "content-length: $raw_size" "$E2E_TMP/head"

# Refused, or small: identity.
get /api/v1/pods "$E2E_TMP/refused" -H 'Accept-Encoding: gzip;q=0, *;q=1'
check "Accept-Encoding: gzip;q=0 is not compressed" no_header content-encoding "$E2E_TMP/refused"
check "and the body is the JSON" same_json "$E2E_TMP/plain" "$E2E_TMP/refused"
pod=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["items"][0]["metadata"]["name"])' "$E2E_TMP/plain")
get "/api/v1/namespaces/default/pods/$pod" "$E2E_TMP/small" --compressed
check "a small answer (one pod) is not compressed" no_header content-encoding "$E2E_TMP/small"
check "and is that pod" test "$(json_get "$(cat "$E2E_TMP/small")" "d['metadata']['name']")" = "$pod"
get "/api/v1/namespaces/default/pods/nope-$pod" "$E2E_TMP/missing" --compressed
check "a 404 is not compressed" no_header content-encoding "$E2E_TMP/missing"

# The Karmada control plane is the same server: the member's answer, relayed
# by the cluster proxy, is compressed for a client that accepts gzip.
member=$karmada get /apis/cluster.karmada.io/v1alpha1/clusters/big/proxy/api/v1/pods "$E2E_TMP/proxied" --compressed
check "karmada's cluster proxy compresses the big list too" header "content-encoding: gzip" "$E2E_TMP/proxied"
check "and it inflates to the same pods" test "$(pod_names "$E2E_TMP/proxied")" = "$(pod_names "$E2E_TMP/plain")"

# The malformedGzip fault: gzip with a wrong CRC-32, whatever the size.
curl -sk --max-time 10 -X PATCH "$control/sim/v1/members/big/faults" -d '{"malformedGzip":true}' >/dev/null
get "/api/v1/namespaces/default/pods/$pod" "$E2E_TMP/bad" -H 'Accept-Encoding: gzip'
check "malformedGzip: Content-Encoding: gzip even on a small answer" header "content-encoding: gzip" "$E2E_TMP/bad"
check "malformedGzip: gzip -t finds the CRC error" bash -c "! gzip -t <'$E2E_TMP/bad' 2>'$E2E_TMP/bad.err' && grep -qi crc '$E2E_TMP/bad.err'"
check "malformedGzip: curl --compressed fails to decode it" \
  bash -c "! curl -sS --max-time 10 --compressed --cacert '$ca' -H 'Authorization: Bearer $token' -o /dev/null '$member/api/v1/pods' 2>/dev/null"
get /api/v1/pods "$E2E_TMP/bad-identity"
check "malformedGzip: a client that does not accept gzip gets plain JSON" \
  test "$(pod_names "$E2E_TMP/bad-identity")" = "$(pod_names "$E2E_TMP/plain")"
curl -sk --max-time 10 -X DELETE "$control/sim/v1/members/big/faults" >/dev/null

# --compress-min-bytes: 0 never compresses; a lower threshold compresses small answers.
run_sim_with() {  # run_sim_with NAME FLAGS...: a second simulator; sets $other to its member's URL
  local name=$1; shift
  spawn "$E2E_TMP/$name.log" "$bin" sim --world "$E2E_TMP/world.yaml" --out-dir "$E2E_TMP/$name" "$@"
  wait_for_log "$E2E_TMP/$name.log" "world ready" 10
  other=$(grep -o 'member big serving on https://127.0.0.1:[0-9]*' "$E2E_TMP/$name.log" | sed 's/.* on //')
}
run_sim_with off --compress-min-bytes 0
member=$other ca="$E2E_TMP/off/ca.crt" get /api/v1/pods "$E2E_TMP/off-list" --compressed
check "--compress-min-bytes 0: the big list is not compressed" no_header content-encoding "$E2E_TMP/off-list"
check "--compress-min-bytes 0: and is the 300 pods' JSON" test "$(pod_names "$E2E_TMP/off-list" | wc -w)" = 300
run_sim_with low --compress-min-bytes 100
member=$other ca="$E2E_TMP/low/ca.crt" get "/api/v1/namespaces/default/pods/$pod" "$E2E_TMP/low-pod" --compressed
check "--compress-min-bytes 100: one pod is compressed" header "content-encoding: gzip" "$E2E_TMP/low-pod"
check "--help documents the flag" bash -c "'$bin' sim --help | grep -q -- '--compress-min-bytes'"
finish

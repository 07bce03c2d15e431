#!/usr/bin/env bash
# The self-signed serving certificate of --cert-dir (no --tls-cert-file):
# written on the first start, used as it is by the next start on the same
# directory (the log says "generated earlier"), and, like --tls-cert-file,
# reloaded without a restart when the pair in the directory is replaced.
# Usage: cert_dir_reload_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

healthy_with() { curl -s --cacert "$1" -o /dev/null -w '%{http_code}' "$2/healthz" | grep -q 200; }

start_serve "$E2E_TMP/first.log"
first_url=$url
check "the first start writes a self-signed pair to --cert-dir" \
  grep -q "self-signed certificate $E2E_TMP/certs/apiserver.crt (generated now)" "$E2E_TMP/first.log"
check "which is what it serves (it verifies against itself)" healthy_with "$E2E_TMP/certs/apiserver.crt" "$first_url"
sum_before=$(sha256sum "$E2E_TMP/certs/apiserver.crt")

start_serve "$E2E_TMP/second.log"
check "a second start on the same --cert-dir uses that pair" \
  grep -q "self-signed certificate $E2E_TMP/certs/apiserver.crt (generated earlier)" "$E2E_TMP/second.log"
check "without rewriting it" test "$(sha256sum "$E2E_TMP/certs/apiserver.crt")" = "$sum_before"
check "and serves it" healthy_with "$E2E_TMP/certs/apiserver.crt" "$url"
stop "$serve_pid"

# Another pair put in the directory, one file after the other: the running
# server serves it within the reload interval (10 s), or the next one when a
# check fell between the two copies.
bash "$src/certs/generate.sh" "$E2E_TMP/rotated" >/dev/null
cp "$E2E_TMP/certs/apiserver.crt" "$E2E_TMP/self-signed.crt"
cp "$E2E_TMP/rotated/serving.key" "$E2E_TMP/certs/apiserver.key"
cp "$E2E_TMP/rotated/serving.crt" "$E2E_TMP/certs/apiserver.crt"
check "the replaced pair serves within the reload interval, without a restart" \
  wait_until 25 healthy_with "$E2E_TMP/rotated/ca.crt" "$first_url"
check "and the self-signed certificate no longer verifies" bash -c "! curl -s --cacert '$E2E_TMP/self-signed.crt' '$first_url/healthz' >/dev/null"
check "the reload is logged" grep -q "serving certificate reloaded from $E2E_TMP/certs/apiserver.crt" "$E2E_TMP/first.log"
finish

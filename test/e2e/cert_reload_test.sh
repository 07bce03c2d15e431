#!/usr/bin/env bash
# The serving certificate is reloaded without a restart: certs/generate.sh
# makes two certificates, fedmetrics serves the first, the files are
# replaced by the second, and new connections get the second (kept-alive
# ones are closed at their next request) within the reload interval (10 s).
# A half-written pair (certificate without its key) keeps the old one.
# Usage: cert_reload_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

bash "$src/certs/generate.sh" "$E2E_TMP/one" >/dev/null
bash "$src/certs/generate.sh" "$E2E_TMP/two" >/dev/null
mkdir -p "$E2E_TMP/live"
cp "$E2E_TMP/one/serving.crt" "$E2E_TMP/live/tls.crt"
cp "$E2E_TMP/one/serving.key" "$E2E_TMP/live/tls.key"
spawn "$E2E_TMP/serve.log" "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --insecure-development-no-auth \
  --tls-cert-file "$E2E_TMP/live/tls.crt" --tls-private-key-file "$E2E_TMP/live/tls.key"
wait_for_log "$E2E_TMP/serve.log" "serving on https://127.0.0.1:" 10
port=$(grep -o 'serving on https://127.0.0.1:[0-9]*' "$E2E_TMP/serve.log" | sed 's/.*://')
healthy_with() { curl -s --cacert "$1" -o /dev/null -w '%{http_code}' "https://127.0.0.1:$port/healthz" | grep -q 200; }

check "the first certificate verifies against the first CA" healthy_with "$E2E_TMP/one/ca.crt"
cp "$E2E_TMP/two/serving.crt" "$E2E_TMP/live/tls.crt"   # the key has not followed yet
# The reloader's next look (within its 10 s interval) refuses the pair and says so.
check "a certificate without its key is not loaded, and the server says why" \
  wait_for_log "$E2E_TMP/serve.log" 'serving certificate not reloaded' 30
check "the first one still serves" healthy_with "$E2E_TMP/one/ca.crt"
cp "$E2E_TMP/two/serving.key" "$E2E_TMP/live/tls.key"
check "once the pair is complete, the second certificate serves (no restart)" \
  wait_until 30 healthy_with "$E2E_TMP/two/ca.crt"
check "and the first CA no longer verifies it" bash -c "! curl -s --cacert '$E2E_TMP/one/ca.crt' https://127.0.0.1:$port/healthz >/dev/null"
check "the reload is logged" grep -q 'serving certificate reloaded' "$E2E_TMP/serve.log"
finish

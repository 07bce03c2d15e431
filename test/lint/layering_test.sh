#!/usr/bin/env bash
# scripts/check-layering.sh passes on the tree and catches each kind of
# violation on a copy of it that has one.
set -uo pipefail
src=$1
failures=0
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }

out=$(bash "$src/scripts/check-layering.sh" "$src") || fail "the tree has layering violations:"$'\n'"$out"

tmp=$(mktemp -d /tmp/fedmetrics-layering.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# expect_violation WHAT FILE LINE: a copy of the tree with LINE added to FILE fails the check, naming the file's directory.
expect_violation() {
  local what=$1 file=$2 line=$3
  rm -rf "$tmp/tree" && mkdir "$tmp/tree" && cp -r "$src/src" "$src/include" "$tmp/tree/"
  mkdir -p "$(dirname "$tmp/tree/$file")"
  echo "$line" >>"$tmp/tree/$file"
  local out
  if out=$(bash "$src/scripts/check-layering.sh" "$tmp/tree"); then
    fail "$what: not caught"
  elif ! grep -q "$(dirname "$file")" <<<"$out"; then
    fail "$what: the report does not name $file: $out"
  else
    echo "ok   - $what is caught"
  fi
}
expect_violation "a module including one above it" src/aggregator/merge.cpp '#include "fedmetrics/controller/hpa_controller.hpp"'
expect_violation "the wire library including a module" include/fedmetrics/k8s/quantity.hpp '#include <fedmetrics/transport/tls_server.hpp>'
expect_violation "Asio outside the transport and the kube client" src/autoscaler/behavior.cpp '#include <boost/asio/io_context.hpp>'
expect_violation "the kube client including member access" src/kube/reflector.cpp '#include "fedmetrics/clusterclient/member_set.hpp"'
expect_violation "member access including Asio" src/clusterclient/member_set.cpp '#include <boost/asio/strand.hpp>'
expect_violation "prometheus-cpp outside telemetry" src/server/request_gate.cpp '#include <prometheus/counter.h>'
expect_violation "the wire library including a third-party header" src/k8s/quantity.cpp '#include <spdlog/spdlog.h>'
expect_violation "a module missing from the table" src/newmod/x.cpp '#include <string>'

[ "$failures" -eq 0 ] && echo "all checks passed" || exit 1

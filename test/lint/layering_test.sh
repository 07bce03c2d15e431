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
# tree_with FILE LINE: a copy of the tree in $tmp/tree with LINE added to FILE.
tree_with() {
  rm -rf "$tmp/tree" && mkdir "$tmp/tree" && cp -r "$src/src" "$src/include" "$tmp/tree/"
  mkdir -p "$(dirname "$tmp/tree/$1")"
  echo "$2" >>"$tmp/tree/$1"
}
# expect_violation WHAT FILE LINE: a copy of the tree with LINE added to FILE fails the check, naming the file's directory.
expect_violation() {
  local what=$1 file=$2 line=$3
  tree_with "$file" "$line"
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
expect_violation "a callback bridge" src/controller/leader_election.cpp 'auto x = co_await async::await_callback<int>(f);'
expect_violation "a lifetime kept by shared_from_this" src/kube/connector.cpp 'struct Held : std::enable_shared_from_this<Held> {};'
expect_violation "a detached spawn" src/server/api_handler.cpp 'void go(E e, T t) { boost::asio::co_spawn(e, std::move(t), boost::asio::detached); }'
expect_violation "a blocking wait on a future" src/main/serve_command.cpp 'int wait_for(std::future<int>& f) { return f.get(); }'
expect_violation "a condition variable in the simulator outside its store" src/sim/simulation.cpp 'std::condition_variable cv;'
expect_violation "a blocking wait in the transport" src/transport/tls_server.cpp 'std::promise<void> done;'
expect_violation "a file of src/ over 600 lines" src/aggregator/long_file.cpp "$(printf '// line\n%.0s' $(seq 601))"
# A comment may name them (explaining why they are gone).
tree_with src/aggregator/merge.cpp '// no shared_from_this, no await_callback, no condition_variable here'
if out=$(bash "$src/scripts/check-layering.sh" "$tmp/tree"); then
  echo "ok   - a comment naming them is not a violation"
else
  fail "a comment naming them is reported: $out"
fi

[ "$failures" -eq 0 ] && echo "all checks passed" || exit 1

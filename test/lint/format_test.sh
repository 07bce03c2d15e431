#!/usr/bin/env bash
# scripts/check-format.sh passes on the tree and catches a file that does not
# follow .clang-format, naming it.
set -uo pipefail
src=$1
failures=0
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }

out=$(bash "$src/scripts/check-format.sh" "$src") || fail "the tree is not formatted:"$'\n'"$out"

tmp=$(mktemp -d /tmp/fedmetrics-format.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp "$src/.clang-format" "$tmp/" && mkdir -p "$tmp/src/k8s"
printf 'int  f( int x ){return x;}\n' >"$tmp/src/k8s/bad.cpp"
if out=$(bash "$src/scripts/check-format.sh" "$tmp"); then
  fail "a badly formatted file is not caught"
elif ! grep -q "src/k8s/bad.cpp" <<<"$out"; then
  fail "the report does not name the file: $out"
else
  echo "ok   - a badly formatted file is caught and named"
fi
[ "$failures" -eq 0 ] && echo "all checks passed" || exit 1

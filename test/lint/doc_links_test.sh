#!/usr/bin/env bash
# scripts/check-doc-links.sh passes on the tree, and catches each kind of
# fault on a small tree that has one: a link to a missing file, a link to a
# missing heading, a missing path in backticks, a citation of a document the
# repository does not hold (on a page or in a comment of the code), a metric
# of the code missing from docs/metrics.md.
set -uo pipefail
src=$1
failures=0
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }

out=$(bash "$src/scripts/check-doc-links.sh" "$src") || fail "the docs point at what the repository does not hold:"$'\n'"$out"

tmp=$(mktemp -d /tmp/fedmetrics-doclinks.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# A tree whose docs are all right: links between pages, to a heading, to a
# file of the tree and in backticks; a fenced block is not checked.
good_tree() {
  rm -rf "$tmp/tree" && mkdir -p "$tmp/tree/docs" "$tmp/tree/src/k8s"
  printf '%s\n' '// Canonical forms as docs/page.md and README.md say.' \
    'const char* name = "fedmetrics_quantities_total";' >"$tmp/tree/src/k8s/quantity.cpp"
  printf '%s\n' '# Metrics' '' '- `fedmetrics_quantities_total`' >"$tmp/tree/docs/metrics.md"
  printf '%s\n' '# Title' '' 'See [the page](docs/page.md#a-section-x) and `src/k8s/quantity.*`.' >"$tmp/tree/README.md"
  printf '%s\n' '# Page' '' '## A section: `x`' '' '[back](../README.md), [here](#page), [code](../src/k8s/quantity.cpp)' \
    '```sh' 'cat src/k8s/missing.cpp  # [x](missing.md)' '```' >"$tmp/tree/docs/page.md"
}
good_tree
out=$(bash "$src/scripts/check-doc-links.sh" "$tmp/tree") || fail "a tree without faults fails the check: $out"

# expect_fault WHAT FILE LINE: the good tree with LINE added to FILE fails the check, naming FILE.
expect_fault() {
  local what=$1 file=$2 line=$3 out
  good_tree
  echo "$line" >>"$tmp/tree/$file"
  if out=$(bash "$src/scripts/check-doc-links.sh" "$tmp/tree"); then
    fail "$what: not caught"
  elif ! grep -q "^$file:" <<<"$out"; then
    fail "$what: the report does not name $file: $out"
  else
    echo "ok   - $what is caught: $out"
  fi
}
expect_fault "a link to a missing page" README.md 'See [install](docs/install.md).'
expect_fault "a link to a missing heading" docs/page.md 'See [it](../README.md#no-such-heading).'
expect_fault "a missing image" docs/page.md '![chart](chart.png)'
expect_fault "a missing path in backticks" docs/page.md 'The code is in `src/k8s/selector.cpp`.'
expect_fault "a citation of a document outside the repository" README.md 'As the wire contract says.'
expect_fault "a page name that is no file of the repository" docs/page.md 'As scenario.md says.'
expect_fault "a citation in a comment of the code" src/k8s/quantity.cpp '// Parses as the wire contract says (section 3.1).'
expect_fault "a page name in the code that is no file of the repository" src/k8s/quantity.cpp '// Canonical forms (quantity.md).'
expect_fault "an issue cited by number in the code" src/k8s/quantity.cpp '// Rounds up (issue 17).'
expect_fault "a design page cited in the code that does not exist" src/k8s/quantity.cpp '// Why: docs/design/rounding.md.'
expect_fault "a metric missing from docs/metrics.md" src/k8s/quantity.cpp 'const char* other = "fedmetrics_selectors_total";'

[ "$failures" -eq 0 ] && echo "all checks passed" || exit 1

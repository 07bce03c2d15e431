#!/usr/bin/env bash
# Checks that every C++ file of the tree follows .clang-format; prints each file
# that does not, with the command that fixes it. Usage: check-format.sh [ROOT]
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
formatter=$(command -v clang-format-14 || command -v clang-format) || {
  echo "check-format: clang-format is not installed (bash scripts/install-deps.sh installs clang-format-14)" >&2
  exit 2
}
cd "$root" || exit 2
mapfile -t files < <(find src include test fuzz bench -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) 2>/dev/null | sort)
bad=()
for f in "${files[@]}"; do
  "$formatter" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
  printf 'not formatted as .clang-format says: %s\n' "${bad[@]}"
  echo "fix with: $formatter -i ${bad[*]}"
  exit 1
fi
echo "check-format: ${#files[@]} files follow .clang-format"

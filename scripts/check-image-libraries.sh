#!/usr/bin/env bash
# Checks that the Dockerfile's runtime stage installs exactly the Debian
# packages whose shared libraries the fedmetrics binary links: every library
# the binary NEEDs (readelf -d), found where the dynamic loader finds it
# (ldd), belongs to a package (dpkg -S) that the runtime stage lists between
# its "runtime libraries" markers, and every package listed there is needed.
# The libraries those libraries need come with apt's dependencies.
# Usage: scripts/check-image-libraries.sh BINARY [DOCKERFILE]
# Exit 0 when the lists match, 1 with the difference, 2 on bad usage.
set -euo pipefail
binary=${1:-}
dockerfile=${2:-$(cd "$(dirname "$0")/.." && pwd)/Dockerfile}
if [ -z "$binary" ] || [ ! -x "$binary" ]; then
  echo "usage: $0 BINARY [DOCKERFILE] (BINARY: a built fedmetrics, e.g. build/fedmetrics)" >&2
  exit 2
fi
[ -f "$dockerfile" ] || { echo "check-image-libraries: no Dockerfile at $dockerfile" >&2; exit 2; }

# The runtime stage's list: package names between the markers, one or more
# per line, with the shell's continuation backslashes and comments removed.
listed=$(sed -n '/# runtime libraries: begin/,/# runtime libraries: end/p' "$dockerfile" |
  sed -e 's/#.*//' -e 's/\\//g' | tr -s ' \t' '\n\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$' | sort -u)
if [ -z "$listed" ]; then
  echo "check-image-libraries: $dockerfile has no package between '# runtime libraries: begin' and '# runtime libraries: end'" >&2
  exit 2
fi

# The binary's direct needs, resolved as the loader resolves them.
needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
declare -A where
while read -r name _ path _; do
  [ -n "${path:-}" ] && where[$name]=$path
done < <(ldd "$binary" | grep '=>')

required=""
status=0
for lib in $needed; do
  case "$lib" in
    # The sanitizer runtimes of an instrumented test build: the image is built without them.
    libasan.so*|libubsan.so*|liblsan.so*|libtsan.so*) continue ;;
  esac
  path=${where[$lib]:-}
  if [ -z "$path" ]; then
    echo "check-image-libraries: $lib (NEEDED by $binary) is not found by the loader" >&2
    status=1
    continue
  fi
  real=$(readlink -f "$path")
  # dpkg knows the path it installed, which may be the /usr-merged or the symlinked one.
  pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$real" 2>/dev/null || dpkg -S "${real#/usr}" 2>/dev/null || true)
  pkg=$(echo "$pkg" | head -1 | cut -d: -f1)
  if [ -z "$pkg" ]; then
    echo "check-image-libraries: no Debian package owns $path ($lib)" >&2
    status=1
    continue
  fi
  required+="$pkg"$'\n'
done
required=$(echo "$required" | grep -v '^$' | sort -u)

missing=$(comm -23 <(echo "$required") <(echo "$listed"))
extra=$(comm -13 <(echo "$required") <(echo "$listed"))
if [ -n "$missing" ]; then
  echo "check-image-libraries: the binary links libraries of packages the Dockerfile's runtime stage does not install:" >&2
  echo "$missing" | sed 's/^/  + /' >&2
  status=1
fi
if [ -n "$extra" ]; then
  echo "check-image-libraries: the Dockerfile's runtime stage installs library packages the binary does not link:" >&2
  echo "$extra" | sed 's/^/  - /' >&2
  status=1
fi
if [ "$status" = 0 ]; then
  echo "check-image-libraries: the runtime stage installs exactly the $(echo "$required" | wc -l) packages the binary links:"
  echo "$required" | sed 's/^/  /'
fi
exit $status

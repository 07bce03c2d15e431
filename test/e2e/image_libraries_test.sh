#!/usr/bin/env bash
# The container image's runtime stage installs exactly the Debian packages
# whose libraries the built binary links (scripts/check-image-libraries.sh on
# the Dockerfile), and the check itself notices a missing and an extra one.
# No Docker engine runs here: what the image would load is checked from the
# binary the suite built, with the same libraries the build stage uses.
bin=$1; src=$2
# The image is built without sanitizers (-DCMAKE_BUILD_TYPE=Release): an
# ASan/UBSan Debug build links other libraries (libasan, and at -O0 some that
# the optimized build does not need, such as libboost_system and libpng16),
# so its list says nothing about the image. Skipped there.
source "$src/test/e2e/lib.sh"
skip_if_sanitizer_build "$bin" "the image's libraries are checked on the plain build"
check_libs() { bash "$src/scripts/check-image-libraries.sh" "$@"; }

check "the Dockerfile's runtime libraries are exactly what $(basename "$bin") links" \
  check_libs "$bin" "$src/Dockerfile"

# A library package taken out of the list is reported as missing.
first=$(sed -n '/# runtime libraries: begin/,/# runtime libraries: end/p' "$src/Dockerfile" |
  grep -v '#' | tr -d '\\' | tr -s ' ' '\n' | grep -E '^libssl' | head -1)
check "the runtime list names libssl (the TLS library)" test -n "$first"
sed "/# runtime libraries: begin/,/# runtime libraries: end/s/ $first / /" "$src/Dockerfile" >"$E2E_TMP/Dockerfile.missing"
out=$(check_libs "$bin" "$E2E_TMP/Dockerfile.missing" 2>&1 || true)
check "a package left out is reported by name" grep -q "+ $first" <<<"$out"
check "and fails the check" bash -c "! bash '$src/scripts/check-image-libraries.sh' '$bin' '$E2E_TMP/Dockerfile.missing' >/dev/null 2>&1"

# A package the binary does not link is reported as extra.
sed "s/# runtime libraries: end/libcurl4 \\\\\n      # runtime libraries: end/" "$src/Dockerfile" >"$E2E_TMP/Dockerfile.extra"
out=$(check_libs "$bin" "$E2E_TMP/Dockerfile.extra" 2>&1 || true)
check "an extra package is reported by name" grep -q -- "- libcurl4" <<<"$out"

# The build stage uses the project's own dependency script, the runtime stage a non-root user.
check "the build stage runs scripts/install-deps.sh --build-only" grep -q 'install-deps.sh --build-only' "$src/Dockerfile"
check "the image runs as a non-root user (65534, as deploy/base/fedmetrics.yaml)" grep -qx 'USER 65534:65534' "$src/Dockerfile"
check "deploy/base/fedmetrics.yaml runs as that user" grep -q 'runAsUser: 65534' "$src/deploy/base/fedmetrics.yaml"
check ".dockerignore keeps build trees out of the context" grep -qx 'build\*/' "$src/.dockerignore"
finish

#!/usr/bin/env bash
# scripts/release.sh with the built binary: the manifests, the archive and
# the krew manifest, all of the one version CMakeLists.txt's project(VERSION)
# gives, which `fedmetrics --version`, the plugin's --version, /version, the
# image label and the manifests' image tag all say; the archive holds the
# LICENSE, the binary and the kubectl-fedmetrics link, and the krew manifest
# its sha256. A binary of another version is refused.
# Usage: release_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2
version=$(sed -n 's/^project(fedmetrics VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
check "CMakeLists.txt names the version ($version)" grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$' <<<"$version"
tag=v$version
out=$E2E_TMP/out
archive=fedmetrics-$version-linux-amd64.tar.gz

check "release.sh makes the artefacts" bash "$src/scripts/release.sh" --out "$out" --binary "$bin" \
  --image registry.test/fedmetrics --download-url "https://downloads.test/fedmetrics/$tag"
for f in components.yaml high-availability.yaml "$archive" plugins/fedmetrics.yaml SHA256SUMS; do
  check "$f is there" test -s "$out/$f"
done
[ "$E2E_FAILURES" -eq 0 ] || finish

# The archive.
mkdir "$E2E_TMP/unpacked"
tar -xzf "$out/$archive" -C "$E2E_TMP/unpacked"
check "the archive holds LICENSE, fedmetrics and kubectl-fedmetrics" \
  test "$(tar -tzf "$out/$archive" | sort | xargs)" = "LICENSE fedmetrics kubectl-fedmetrics"
check "its LICENSE is the repository's, Apache-2.0" \
  bash -c "cmp -s '$E2E_TMP/unpacked/LICENSE' '$src/LICENSE' && grep -q 'Apache License' '$src/LICENSE' && grep -q 'Version 2.0, January 2004' '$src/LICENSE'"
check "kubectl-fedmetrics is a link to fedmetrics" test "$(readlink "$E2E_TMP/unpacked/kubectl-fedmetrics")" = fedmetrics
check "fedmetrics --version says $tag" test "$("$E2E_TMP/unpacked/fedmetrics" --version)" = "fedmetrics $tag"
check "started as kubectl-fedmetrics it is the plugin, of $tag too" \
  test "$("$E2E_TMP/unpacked/kubectl-fedmetrics" --version)" = "kubectl-fedmetrics $tag"

# The krew manifest.
sha=$(sha256sum "$out/$archive" | awk '{print $1}')
krew=$(/usr/bin/python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' "$out/plugins/fedmetrics.yaml")
check "the krew manifest is a krew Plugin named fedmetrics, of $tag" \
  test "$(json_get "$krew" "d['apiVersion'], d['kind'], d['metadata']['name'], d['spec']['version']")" \
  = "krew.googlecontainertools.github.com/v1alpha2 Plugin fedmetrics $tag"
check "with a short and a long description" \
  test "$(json_get "$krew" "bool(d['spec']['shortDescription']) and len(d['spec']['description']) > len(d['spec']['shortDescription'])")" = True
check "one platform, linux/amd64, with the archive's uri and sha256 and a bin that is in it" \
  test "$(json_get "$krew" "[(p['selector']['matchLabels'], p['uri'], p['sha256'], p['bin']) for p in d['spec']['platforms']]")" \
  = "[({'os': 'linux', 'arch': 'amd64'}, 'https://downloads.test/fedmetrics/$tag/$archive', '$sha', 'fedmetrics')]"
check "SHA256SUMS checks" bash -c "cd '$out' && sha256sum --quiet -c SHA256SUMS"

# The manifests: the image of this version, and valid.
images() { grep -h '^ *image: ' "$@" | awk '{print $2}' | sort -u | xargs; }
check "components.yaml and high-availability.yaml run registry.test/fedmetrics:$tag" \
  test "$(images "$out/components.yaml") $(images "$out/high-availability.yaml")" = "registry.test/fedmetrics:$tag registry.test/fedmetrics:$tag"
check "the repository's base names the same tag" test "$(kubectl kustomize "$src/deploy" | images /dev/stdin)" = "fedmetrics:$tag"
check "high-availability.yaml has two replicas" grep -q '^  replicas: 2$' "$out/high-availability.yaml"
check "both validate against the Kubernetes API types" \
  /usr/bin/python3 "$src/test/e2e/tools/validate_manifests.py" "$out/components.yaml" "$out/high-availability.yaml" >/dev/null

# The image: its label is the version image.sh passes from CMakeLists.txt.
check "the Dockerfile labels the image with ARG VERSION" \
  bash -c "grep -qx 'ARG VERSION=unknown' '$src/Dockerfile' && grep -q 'org.opencontainers.image.version=\"\$VERSION\"' '$src/Dockerfile'"
check "scripts/image.sh builds it with VERSION=v<project version>" grep -q -- '--build-arg "VERSION=v$version"' "$src/scripts/image.sh"

# /version of the running server.
start_serve "$E2E_TMP/serve.log"
served=$(curl -s --cacert "$ca" "$url/version")
check "/version says gitVersion $tag, major ${version%%.*}, minor $(cut -d. -f2 <<<"$version")" \
  test "$(json_get "$served" "d['gitVersion'], d['major'], d['minor']")" = "$tag ${version%%.*} $(cut -d. -f2 <<<"$version")"

# A binary of another version is refused, saying why.
printf '#!/bin/sh\necho "fedmetrics v0.0.0-other"\n' >"$E2E_TMP/other" && chmod +x "$E2E_TMP/other"
said=$(bash "$src/scripts/release.sh" --out "$E2E_TMP/other-out" --binary "$E2E_TMP/other" --download-url https://downloads.test 2>&1 || true)
check "release.sh refuses a binary of another version" grep -q 'says "fedmetrics v0.0.0-other", not "fedmetrics '"$tag"'"' <<<"$said"
check "and makes nothing" test ! -e "$E2E_TMP/other-out/$archive"
finish

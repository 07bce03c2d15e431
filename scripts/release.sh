#!/usr/bin/env bash
# Makes a release's artefacts, all of one version: CMakeLists.txt's
# project(fedmetrics VERSION ...), the only place it is written.
#   scripts/release.sh [--out DIR] [--binary BIN] [--image REPOSITORY] [--download-url URL]
#   --out DIR           where the artefacts go (default dist/)
#   --binary BIN        the fedmetrics to ship (default build/fedmetrics, built with
#                       scripts/build.sh when absent); its --version must be the version
#   --image REPOSITORY  the image the manifests run (default fedmetrics), tagged v<version>
#   --download-url URL  where the archive will be downloaded from, for the krew
#                       manifest (default: the GitHub release of v<version> of the
#                       repository `origin` names, when it is on GitHub)
# Writes to DIR:
#   components.yaml                           deploy/ (the base) rendered
#   high-availability.yaml                    deploy/overlays/high-availability rendered
#   fedmetrics-<version>-linux-amd64.tar.gz   fedmetrics, the kubectl-fedmetrics link, LICENSE
#   plugins/fedmetrics.yaml                   the krew manifest, with the archive's sha256
#   SHA256SUMS
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/dist binary=$root/build/fedmetrics image=fedmetrics download_url=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --binary) binary=$2; shift 2 ;;
    --image) image=$2; shift 2 ;;
    --download-url) download_url=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "release: unknown argument \"$1\"" >&2; exit 2 ;;
  esac
done
fail() { echo "release: $*" >&2; exit 1; }

version=$(sed -n 's/^project(fedmetrics VERSION \([0-9][0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[ -n "$version" ] || fail "no project(fedmetrics VERSION ...) in CMakeLists.txt"
tag=v$version
if [ -z "$download_url" ]; then
  origin=$(git -C "$root" remote get-url origin 2>/dev/null || true)
  case "$origin" in
    *github.com[:/]*)
      slug=$(sed -E 's#^.*github\.com[:/]##; s#\.git$##' <<<"$origin")
      download_url=https://github.com/$slug/releases/download/$tag ;;
    *) fail "no GitHub origin to download the archive from: give --download-url" ;;
  esac
fi

if [ ! -x "$binary" ]; then
  [ "$binary" = "$root/build/fedmetrics" ] || fail "$binary: no such program"
  bash "$root/scripts/build.sh" build -DCMAKE_BUILD_TYPE=Release
fi
said=$("$binary" --version)
[ "$said" = "fedmetrics $tag" ] || fail "$binary --version says \"$said\", not \"fedmetrics $tag\": rebuild it"
[ "$(uname -m)" = x86_64 ] || fail "the archive is for linux/amd64, this is $(uname -m)"

mkdir -p "$out/plugins"
out=$(cd "$out" && pwd)
work=$(mktemp -d /tmp/fedmetrics-release.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The manifests: the base and the overlay, with the image of this version.
render() {  # render KUSTOMIZATION_DIR OUTPUT
  mkdir -p "$work/render"
  # kustomize takes no absolute path of a base: one relative to the overlay.
  cat >"$work/render/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $(realpath --relative-to="$work/render" "$1")
images:
- {name: fedmetrics, newName: $image, newTag: $tag}
YAML
  kubectl kustomize "$work/render" >"$work/rendered.yaml"
  {
    echo "# fedmetrics $tag: kubectl kustomize ${1#"$root/"}, image $image:$tag (docs/install.md)"
    cat "$work/rendered.yaml"
  } >"$2"
}
render "$root/deploy" "$out/components.yaml"
render "$root/deploy/overlays/high-availability" "$out/high-availability.yaml"

# The archive: owned by root, in name order, dated by the commit, so that the
# same tree gives the same bytes.
archive=fedmetrics-$version-linux-amd64.tar.gz
mkdir "$work/archive"
cp "$binary" "$work/archive/fedmetrics"
strip --strip-unneeded "$work/archive/fedmetrics" 2>/dev/null || true
ln -s fedmetrics "$work/archive/kubectl-fedmetrics"
cp "$root/LICENSE" "$work/archive/LICENSE"
mtime=$(git -C "$root" log -1 --format=%cI 2>/dev/null || echo 1970-01-01T00:00:00Z)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" -C "$work/archive" \
  -cf - LICENSE fedmetrics kubectl-fedmetrics | gzip -n >"$out/$archive"
sha=$(sha256sum "$out/$archive" | awk '{print $1}')

# The krew manifest. krew links bin under the plugin's name, kubectl-fedmetrics,
# and fedmetrics runs as the plugin when started under that name.
cat >"$out/plugins/fedmetrics.yaml" <<YAML
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: fedmetrics
spec:
  version: $tag
  shortDescription: Show pod and node usage across Karmada member clusters
  description: |
    kubectl fedmetrics top pod and top node show CPU and memory usage as
    kubectl top does, for every member cluster of a Karmada federation at
    once, with the member each row comes from. They read the metrics.k8s.io
    API of the Karmada control plane, served by fedmetrics behind its
    aggregation layer.
  platforms:
  - selector:
      matchLabels: {os: linux, arch: amd64}
    uri: $download_url/$archive
    sha256: $sha
    bin: fedmetrics
YAML
(cd "$out" && sha256sum components.yaml high-availability.yaml "$archive" plugins/fedmetrics.yaml >SHA256SUMS)
echo "release: fedmetrics $tag in $out:"
(cd "$out" && ls -l components.yaml high-availability.yaml "$archive" plugins/fedmetrics.yaml SHA256SUMS | awk '{print "  " $NF " (" $5 " bytes)"}')

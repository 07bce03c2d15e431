#!/usr/bin/env bash
# Installs, from Debian bookworm's archive, what scripts/image.sh needs to build
# and run the container image without a container registry: podman with runc
# as its runtime, and mmdebstrap to make the debian:bookworm base images from
# Debian's archive. Idempotent; run as root. Not part of install-deps.sh: the
# build and the test suite do not need a container engine.
set -euo pipefail

packages=(podman runc mmdebstrap uidmap slirp4netns)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-image-deps: all packages present"
  exit 0
fi
echo "install-image-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"

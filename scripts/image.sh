#!/usr/bin/env bash
# Builds the container image from the Dockerfile and runs it for real: the
# image's `fedmetrics serve`, as its non-root user on a read-only root file
# system, in front of a simulated Karmada world on the host network, must
# answer /readyz and a pods query that the simulated control plane's
# aggregation layer forwards to it.
#   scripts/image.sh [--binary BIN] [--tag TAG] [--no-run]
#   --binary BIN  put BIN (built on Debian bookworm, e.g. build/fedmetrics) in the
#                 image instead of compiling it in the build stage (minutes instead
#                 of a full build); the world is simulated by BIN too
#   --tag TAG     the image's name (default fedmetrics:v<version>)
#   --no-run      build only
# With podman (scripts/install-image-deps.sh installs it, runc and mmdebstrap),
# or docker when its daemon answers. No registry is needed: the debian:bookworm
# and debian:bookworm-slim bases are made with mmdebstrap from Debian's
# archive and imported, when the engine does not have them yet. Prints each
# phase's time; exits non-zero when a phase fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary="" tag="" run=1
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=$(realpath "$2"); shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --no-run) run=0; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "image: unknown argument \"$1\"" >&2; exit 2 ;;
  esac
done
version=$(sed -n 's/^project(fedmetrics VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[ -n "$version" ] || { echo "image: no project(fedmetrics VERSION ...) in CMakeLists.txt" >&2; exit 2; }
tag=${tag:-fedmetrics:v$version}
work=$(mktemp -d /tmp/fedmetrics-image.XXXXXX)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  [ -n "${engine:-}" ] && "${engine[@]}" rm -f fedmetrics-image-test >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
phase_start=$SECONDS
phase() { echo "image: $1 ($((SECONDS - phase_start)) s)"; phase_start=$SECONDS; }

# The engine. /usr/local/bin/docker may be a client without a daemon: docker
# only when `docker info` answers.
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  engine=(docker)
elif command -v podman >/dev/null 2>&1; then
  # podman as Debian ships it, on machines without systemd or cgroup v2
  # delegation: runc as the runtime, cgroupfs, no default ulimits (raising
  # them fails in an unprivileged container), events in a file.
  cat >"$work/containers.conf" <<'CONF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
  export CONTAINERS_CONF=$work/containers.conf
  engine=(podman)
else
  echo "image: neither podman nor a docker daemon (scripts/install-image-deps.sh installs podman)" >&2
  exit 1
fi

# The bases, from Debian's archive when the engine has none.
for base in debian:bookworm debian:bookworm-slim; do
  "${engine[@]}" image inspect "$base" >/dev/null 2>&1 && continue
  if [ ! -f "$work/bookworm.tar" ]; then
    command -v mmdebstrap >/dev/null || { echo "image: no $base and no mmdebstrap to make it" >&2; exit 1; }
    mmdebstrap --quiet --variant=minbase bookworm "$work/bookworm.tar" http://deb.debian.org/debian
  fi
  "${engine[@]}" import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' "$work/bookworm.tar" "$base" >/dev/null
  phase "made $base with mmdebstrap"
done

# The image.
commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
build_args=(--build-arg "VERSION=v$version" --build-arg "GIT_COMMIT=$commit" -t "$tag" -f "$root/Dockerfile")
[ "${engine[0]}" = podman ] && build_args+=(--network=host)
if [ -n "$binary" ]; then
  mkdir "$work/context" && cp "$binary" "$work/context/fedmetrics"
  strip --strip-unneeded "$work/context/fedmetrics"   # as the build stage does
  "${engine[@]}" build "${build_args[@]}" --target prebuilt "$work/context"
else
  "${engine[@]}" build "${build_args[@]}" "$root"
fi
phase "built $tag"
label=$("${engine[@]}" image inspect -f '{{index .Config.Labels "org.opencontainers.image.version"}}' "$tag")
[ "$label" = "v$version" ] || { echo "image: label org.opencontainers.image.version is '$label', not v$version" >&2; exit 1; }
[ "$run" = 1 ] || exit 0

# The run. The world is simulated on the host by the same program (the
# image's own, copied out, unless --binary names one).
sim_bin=$binary
if [ -z "$sim_bin" ]; then
  id=$("${engine[@]}" create "$tag")
  "${engine[@]}" cp "$id:/usr/local/bin/fedmetrics" "$work/fedmetrics"
  "${engine[@]}" rm "$id" >/dev/null
  sim_bin=$work/fedmetrics
fi
bash "$root/certs/generate.sh" "$work/certs" fedmetrics fedmetrics-system >/dev/null
chmod a+rx "$work" "$work/certs" && chmod a+r "$work/certs/"*   # read by the image's user 65534
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sed -n '/^members:/,$p' "$root/test/e2e/karmada.world.yaml" >"$work/world.yaml"
printf 'aggregation:\n  address: 127.0.0.1\n  port: %s\n  caFile: certs/ca.crt\n' "$port" >>"$work/world.yaml"
"$sim_bin" sim --world "$work/world.yaml" --out-dir "$work/world" >"$work/sim.log" 2>&1 &
pids+=($!)
wait_for() {  # wait_for SECONDS COMMAND...
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}
wait_for 20 grep -q 'world ready' "$work/sim.log" || { cat "$work/sim.log"; exit 1; }
chmod -R a+rX "$work/world"
# The world's kubeconfigs name their files by absolute path: the work
# directory is mounted (read-only) where it is on the host.
"${engine[@]}" run -d --name fedmetrics-image-test --network=host --read-only -v "$work:$work:ro" "$tag" \
  serve --secure-port "$port" --bind-address 127.0.0.1 \
  --tls-cert-file "$work/certs/serving.crt" --tls-private-key-file "$work/certs/serving.key" \
  --authentication-kubeconfig "$work/world/karmada.kubeconfig" --authorization-kubeconfig "$work/world/karmada.kubeconfig" \
  --member-kubeconfig "$work/world/members.kubeconfig" >/dev/null
running() { [ "$("${engine[@]}" inspect -f '{{.State.Running}}' fedmetrics-image-test 2>/dev/null)" = true ]; }
ready() { running && curl -sf --cacert "$work/certs/ca.crt" "https://127.0.0.1:$port/readyz" | grep -qx ok; }
ready_or_gone() { ready || ! running; }
if ! wait_for 30 ready_or_gone || ! ready; then
  "${engine[@]}" logs fedmetrics-image-test >&2 || true
  echo "image: the container's /readyz never answered ok" >&2
  exit 1
fi
phase "the container answers /readyz"
user=$("${engine[@]}" exec fedmetrics-image-test id -u)
readonly_root=$("${engine[@]}" inspect -f '{{.HostConfig.ReadonlyRootfs}}' fedmetrics-image-test)
echo "image: runs as uid $user, read-only root file system: $readonly_root"
[ "$user" = 65534 ] && [ "$readonly_root" = true ] || { echo "image: not as uid 65534 on a read-only root" >&2; exit 1; }
kk() { kubectl --kubeconfig "$work/world/karmada.kubeconfig" --request-timeout=10s "$@"; }
pods=$(kk get --raw /apis/metrics.k8s.io/v1beta1/pods)
count=$(python3 -c 'import json, sys; print(len(json.loads(sys.argv[1])["items"]))' "$pods")
[ "$count" -gt 0 ] || { echo "image: the pods query through the aggregation layer has no items: $pods" >&2; exit 1; }
phase "a pods query through the simulated aggregation layer: $count pods"
kk top pods -A | head -4
echo "image: $tag OK"

#!/usr/bin/env bash
# Installs, from Debian bookworm's archive only, every package fedmetrics needs to
# build, test and benchmark. Idempotent: packages already present are skipped, and
# apt-get is not called at all when nothing is missing. Run as root.
#   install-deps.sh               everything: build, tests, benchmarks, fuzzing
#   install-deps.sh --build-only  only what building the fedmetrics binary needs
#                                 (the Dockerfile's build stage)
set -euo pipefail

build_only=0
case "${1:-}" in
  "") ;;
  --build-only) build_only=1 ;;
  -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "install-deps: unknown argument \"$1\" (expected --build-only or nothing)" >&2; exit 2 ;;
esac

# What the binary is built from and links (Dockerfile: the runtime stage
# installs the runtime halves of these; scripts/check-image-libraries.sh).
packages=(
  build-essential cmake pkg-config git
  libboost1.81-dev libboost-url1.81-dev
  libssl-dev
  nlohmann-json3-dev
  libspdlog-dev libfmt-dev
  libyaml-cpp-dev
  prometheus-cpp-dev
  libcli11-dev
  libhowardhinnant-date-dev tzdata  # time zones of cron schedules: date/tz on the OS's IANA database
  zlib1g-dev
  libcairo2-dev  # simulate --plot: cairo's SVG and PNG surfaces (optional: without it --plot says so)
)
# What the tests, the benchmarks and the fuzz build add.
test_packages=(
  openssl  # certs/generate.sh
  catch2
  curl
  python3 python3-kubernetes
  wrk nginx-light
  prometheus  # a real Prometheus server and promtool scrape /metrics in an e2e test (prometheus_scrape_test)
  clang libclang-rt-14-dev  # the fuzz build (fuzz/): clang 14 and its libFuzzer, ASan and UBSan runtimes
  clang-format-14  # lint: format (scripts/check-format.sh): the C++ files follow .clang-format
  binutils  # readelf: scripts/check-image-libraries.sh
  ccache  # scripts/build.sh compiles through it when present: the suite builds three trees, often of the same sources
)
[ "$build_only" = 1 ] || packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# kubectl is the real client of the end-to-end tests; Debian ships it as kubernetes-client.
if [ "$build_only" = 0 ] && ! command -v kubectl >/dev/null 2>&1; then
  missing+=(kubernetes-client)
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run this script as root (or: sudo $0)" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"

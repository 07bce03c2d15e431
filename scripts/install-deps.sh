#!/usr/bin/env bash
# Installs, from Debian bookworm's archive only, every package fedmetrics needs to
# build, test and benchmark. Idempotent: packages already present are skipped, and
# apt-get is not called at all when nothing is missing. Run as root.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libboost1.81-dev libboost-url1.81-dev
  libssl-dev openssl
  nlohmann-json3-dev
  libspdlog-dev libfmt-dev
  catch2
  libyaml-cpp-dev
  prometheus-cpp-dev
  libcli11-dev
  libhowardhinnant-date-dev tzdata  # time zones of cron schedules: date/tz on the OS's IANA database
  zlib1g-dev
  curl
  python3 python3-kubernetes
  wrk nginx-light
  prometheus  # a real Prometheus server and promtool scrape /metrics in an e2e test (prometheus_scrape_test)
  clang libclang-rt-14-dev  # the fuzz build (fuzz/): clang 14 and its libFuzzer, ASan and UBSan runtimes
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# kubectl is the real client of the end-to-end tests; Debian ships it as kubernetes-client.
if ! command -v kubectl >/dev/null 2>&1; then
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

#!/usr/bin/env bash
# README command 1: installs what is missing, builds, and runs fedmetrics on
# its embedded default. Today that is the API server alone on 127.0.0.1 with a
# generated certificate (the simulated member clusters are not built yet), so
# metrics queries answer 503 until members exist. Ctrl-C stops it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
port=${FEDMETRICS_DEMO_PORT:-8443}

bash scripts/install-deps.sh
echo "==> building fedmetrics"
cmake -S . -B build >/dev/null
cmake --build build -j "$(nproc)" --target fedmetrics

demo=$root/build/demo
mkdir -p "$demo"
cat >"$demo/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: fedmetrics
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority: $demo/certs/apiserver.crt
users:
- name: developer
  user: {token: development}
contexts:
- name: fedmetrics
  context: {cluster: fedmetrics, user: developer}
current-context: fedmetrics
KUBECONFIG

cat <<TRY

fedmetrics is starting on https://127.0.0.1:$port (self-signed certificate in $demo/certs).
In another terminal, try:

  export KUBECONFIG=$demo/kubeconfig
  kubectl get --raw /apis | python3 -m json.tool          # the three metrics API groups
  kubectl get --raw /apis/metrics.k8s.io/v1beta1          # pods and nodes, get and list
  kubectl get --raw /apis/custom.metrics.k8s.io/v1beta2   # custom metrics the members know
  kubectl top pod                                         # 503 until member clusters are configured
  kubectl get --raw '/apis/metrics.k8s.io/v1beta1/pods?labelSelector=a%20b'   # a Kubernetes 400
  curl --cacert $demo/certs/apiserver.crt https://127.0.0.1:$port/metrics    # fedmetrics' own metrics

Press Ctrl-C to stop.
TRY
exec "$root/build/fedmetrics" serve --bind-address 127.0.0.1 --secure-port "$port" \
  --cert-dir "$demo/certs" --insecure-development-no-auth

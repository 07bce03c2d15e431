#!/usr/bin/env bash
# Makes, with the openssl command, the certificates fedmetrics needs in a
# cluster or in the simulated world:
#   ca.crt/ca.key                 a CA for fedmetrics' serving certificate
#   serving.crt/serving.key       fedmetrics' serving certificate, for the Service's DNS names and 127.0.0.1
#   front-proxy-ca.crt/.key       the CA the aggregation layer's client certificate chains to
#   front-proxy-client.crt/.key   the aggregation layer's client certificate (CN front-proxy-client)
# and prints the caBundle for deploy/base/apiservice.yaml.
# Usage: certs/generate.sh [OUT_DIR] [SERVICE_NAME] [SERVICE_NAMESPACE]
set -euo pipefail
out=${1:-certs/out}
service=${2:-fedmetrics}
namespace=${3:-fedmetrics-system}
days=${FEDMETRICS_CERT_DAYS:-365}
mkdir -p "$out"
cd "$out"

make_ca() {  # make_ca NAME CN
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
    -subj "/CN=$2" -keyout "$1.key" -out "$1.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}
make_leaf() {  # make_leaf NAME CA CN EXTENDED_USAGE [SAN]
  local name=$1 ca=$2 cn=$3 usage=$4 san=${5:-}
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$cn" \
    -keyout "$name.key" -out "$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    [ -n "$san" ] && echo "subjectAltName=$san"
  } >"$name.ext"
  openssl x509 -req -in "$name.csr" -CA "$ca.crt" -CAkey "$ca.key" -CAcreateserial -days "$days" \
    -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

make_ca ca "fedmetrics-ca"
make_leaf serving ca "$service.$namespace.svc" serverAuth \
  "DNS:$service,DNS:$service.$namespace,DNS:$service.$namespace.svc,DNS:$service.$namespace.svc.cluster.local,DNS:localhost,IP:127.0.0.1"
make_ca front-proxy-ca "front-proxy-ca"
make_leaf front-proxy-client front-proxy-ca "front-proxy-client" clientAuth
chmod 600 ./*.key
echo "wrote $(pwd)/{ca,serving,front-proxy-ca,front-proxy-client}.{crt,key}"
echo "caBundle for deploy/base/apiservice.yaml:"
base64 -w0 ca.crt
echo

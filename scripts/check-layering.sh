#!/usr/bin/env bash
# Checks the module layering that docs/architecture.md draws, on the
# #include lines of src/ and include/fedmetrics/ (a root other than the
# repository's may be given, which the suite uses to show a violation fails):
#   1. a module includes only itself and the modules below it (the table);
#   2. Boost.Asio and Boost.Beast are included only by the transport and
#      the Kubernetes client (kube), so the other modules compile fast and
#      stay testable without sockets;
#   3. the wire library (k8s) includes no third-party header but nlohmann/json;
#   4. prometheus-cpp is included only by telemetry, so that the modules it
#      observes keep no metric types (they report through ports or stats).
# Prints each violation as FILE:LINE: what, and exits 1 if there is one.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}

# module: the modules it may include besides itself. main is the composition
# root and may include every module.
declare -A allowed=(
  [k8s]=""
  [cron]="k8s"
  [promsource]="k8s"
  [transport]="k8s"
  [aggregator]="k8s transport"
  [auth]="k8s transport"
  [autoscaler]="k8s cron"
  [plot]="k8s autoscaler"
  [plugin]="k8s aggregator kube clusterclient autoscaler"
  [kube]="k8s transport"
  [kubeclient]="k8s transport aggregator auth autoscaler cron kube controller"
  [clusterclient]="k8s transport aggregator kube promsource"
  [server]="k8s transport aggregator auth"
  [controller]="k8s transport aggregator autoscaler cron"
  [sim]="k8s transport autoscaler kube clusterclient auth"
  [telemetry]="k8s transport aggregator auth autoscaler cron kube clusterclient server controller"
)
asio_allowed="transport kube"
prometheus_allowed="telemetry"

violations=0
report() { echo "$1: $2"; violations=$((violations + 1)); }

shopt -s nullglob
for dir in "$root"/src/* "$root"/include/fedmetrics/*; do
  [ -d "$dir" ] || continue
  module=$(basename "$dir")
  [ "$module" = main ] && continue
  if [ -z "${allowed[$module]+set}" ]; then
    report "$dir" "module '$module' is not in scripts/check-layering.sh's table: add it with the modules it may include"
    continue
  fi
  may=" $module ${allowed[$module]} "
  while IFS=: read -r file line text; do
    if [[ $text =~ \#include[[:space:]]*[\<\"]fedmetrics/([a-z0-9_]+)/ ]]; then
      target=${BASH_REMATCH[1]}
      [[ $may == *" $target "* ]] || report "$file:$line" "$module includes $target (allowed:${allowed[$module]:- none})"
    elif [[ $text =~ \#include[[:space:]]*\<boost/(asio|beast) ]]; then
      [[ " $asio_allowed " == *" $module "* ]] || report "$file:$line" "$module includes Boost.${BASH_REMATCH[1]^} (only $asio_allowed may)"
    elif [[ $text =~ \#include[[:space:]]*\<prometheus/ ]]; then
      [[ " $prometheus_allowed " == *" $module "* ]] || report "$file:$line" "$module includes prometheus-cpp (only $prometheus_allowed may)"
    fi
    if [ "$module" = k8s ] && [[ $text =~ \#include[[:space:]]*\<([a-zA-Z0-9_+-]+)/ ]]; then
      [ "${BASH_REMATCH[1]}" = nlohmann ] || report "$file:$line" "k8s includes <${BASH_REMATCH[1]}/...> (the wire library depends on nlohmann/json only)"
    fi
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include' "$dir" --include='*.hpp' --include='*.cpp' --include='*.h' || true)
done

if [ "$violations" -ne 0 ]; then
  echo "$violations layering violation(s); the rules are in docs/architecture.md"
  exit 1
fi
echo "layering ok"

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
#      observes keep no metric types (they report through ports or stats);
#   5. one async style: no callback bridge (await_callback), no lifetime
#      kept by shared_from_this, no detached spawn, and no thread blocking on
#      a future or a condition variable, except where `async_exempt` below
#      says why;
#   6. no file of src/ over 600 lines (one concern a file), except where
#      `length_exempt` below says why.
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

# Rule 5, on the code of src/ and include/fedmetrics/ (comments left out).
# Each exemption is a file and why it may keep a blocking wait; nothing else
# of these patterns is allowed anywhere.
declare -A async_exempt=(
  [src/transport/runtime.cpp]="Runtime::wait: the main thread waits for the runtime to be told to stop"
  [src/transport/async.cpp]="run_and_wait and Job::stop: the owner's thread (main, at start-up and at stop) waits for a coroutine on the runtime's threads, which never wait on them"
  [src/plugin/session.hpp]="the one-shot plugin CLI's requests (top, explain): its thread waits for their answers, then exits"
  [src/kubeclient/watched_member_pods.cpp]="WatchedMemberPods::stop: the owner's thread (serve's stop, after the loop) waits for the pod watches' coroutines on the runtime's threads, which never wait on it, as Job::stop does"
  [src/plugin/top_command.cpp]="the one-shot plugin CLI's top: its thread waits for its requests' answers, then exits"
  [src/sim/object_store.cpp]="the simulator's store: unwatch waits out a watch's delivery in progress on another thread"
  [src/sim/store_watch.hpp]="declares the watch's condition variable (object_store.cpp)"
  [src/clusterclient/member_set.cpp]="MemberSet::wait_for_first_discovery: no caller in serve (start-up awaits discovery as a coroutine); the next to delete"
  [include/fedmetrics/clusterclient/member_set.hpp]="declares wait_for_first_discovery's condition variable (member_set.cpp)"
)
async_patterns='await_callback|shared_from_this|(^|[^A-Za-z_])detached([^A-Za-z_]|$)|std::(shared_)?future|std::promise|get_future|use_future|condition_variable'
while IFS=: read -r file line text; do
  [ -n "${async_exempt[${file#"$root"/}]+set}" ] && continue
  code=${text%%//*}
  if [[ $code =~ ($async_patterns) ]]; then
    report "$file:$line" "${BASH_REMATCH[1]//[^A-Za-z_:]/} (one async style: coroutines that return a result, lifetimes that follow scopes, no thread blocking on another; see docs/architecture.md)"
  fi
done < <(grep -rnE "$async_patterns" "$root/src" "$root/include/fedmetrics" --include='*.hpp' --include='*.cpp' --include='*.h' 2>/dev/null || true)

# Rule 6: 600 lines is the prompt to look for a second concern in a file.
declare -A length_exempt=()
while IFS= read -r file; do
  [ -n "${length_exempt[${file#"$root"/}]+set}" ] && continue
  lines=$(wc -l <"$file")
  if [ "$lines" -gt 600 ]; then
    report "$file:601" "$lines lines, over 600 (split it along its concerns, or name it with its reason in docs/architecture.md and in length_exempt here)"
  fi
done < <(find "$root/src" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) 2>/dev/null)

if [ "$violations" -ne 0 ]; then
  echo "$violations layering violation(s); the rules are in docs/architecture.md"
  exit 1
fi
echo "layering ok"

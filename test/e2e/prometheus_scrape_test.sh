#!/usr/bin/env bash
# A real Prometheus server (Debian's `prometheus`) scrapes `fedmetrics serve
# --enable-autoscaler` as it would in a cluster: over TLS, verifying the
# serving certificate with its CA, with the bearer token of a user whose only
# right is GET /metrics (a ServiceAccount bound to a ClusterRole with
# nonResourceURLs: ["/metrics"]), every second. After a few syncs of the
# walkthrough's FederatedHPA, Prometheus's HTTP API must have the autoscaler's
# series (kube-controller-manager's HPA controller metrics under our prefix,
# the replicas, the leader election status), the process metrics every
# Prometheus client exports, and fedmetrics_build_info; and `promtool check
# metrics` must find nothing to say about a scrape of /metrics.
# Usage: prometheus_scrape_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

for tool in prometheus promtool; do
  command -v $tool >/dev/null || { echo "FAIL - $tool is not installed (scripts/install-deps.sh installs Debian's prometheus)"; exit 1; }
done

# The karmada e2e world, with the scraper's user: a token that may GET /metrics and nothing else.
cp "$src/test/e2e/karmada.world.yaml" "$E2E_TMP/world.yaml"
cat >>"$E2E_TMP/world.yaml" <<'YAML'
  - name: prometheus
    token: prometheus-token
    rules:
      - verbs: [get]
        nonResourceURLs: [/metrics]
YAML
start_sim "$E2E_TMP/world.yaml"

spawn "$E2E_TMP/serve.log" "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs" --shutdown-delay-duration 0s \
  --authentication-kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --authorization-kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
  --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
  --enable-autoscaler --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
  --horizontal-pod-autoscaler-sync-period 1s --horizontal-pod-autoscaler-cpu-initialization-period 1s \
  --horizontal-pod-autoscaler-initial-readiness-delay 1s \
  --leader-elect-lease-duration 3s --leader-elect-renew-deadline 2s --leader-elect-retry-period 250ms
serve_pid=$spawned
wait_for_log "$E2E_TMP/serve.log" "serving on https://127.0.0.1:" 10
port=$(grep -o 'https://127.0.0.1:[0-9]*' "$E2E_TMP/serve.log" | head -1 | sed 's/.*://')
url="https://127.0.0.1:$port"
ca="$E2E_TMP/certs/apiserver.crt"
scrape() { curl -s --max-time 10 --cacert "$ca" -H "Authorization: Bearer $1" -o "$2" -w '%{http_code}' "$url/metrics"; }

check "/metrics with the scraper's token: 200" test "$(scrape prometheus-token "$E2E_TMP/scrape.txt")" = 200
check "/metrics with a token that may not GET it: 403" test "$(scrape viewer-token /dev/null)" = 403

cp "$src/examples/federatedhpa/nginx.yaml" "$E2E_TMP/fhpa.yaml"
check "kubectl apply the walkthrough's FederatedHPA" kk apply -f "$E2E_TMP/fhpa.yaml"

# Prometheus on a free loopback port, its data in the test's temp dir (gone with it).
printf '%s' prometheus-token >"$E2E_TMP/prometheus-token"
cat >"$E2E_TMP/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: fedmetrics
    scheme: https
    tls_config:
      ca_file: $ca
    authorization:
      type: Bearer
      credentials_file: $E2E_TMP/prometheus-token
    static_configs:
      - targets: ["127.0.0.1:$port"]
YAML
check "promtool check config" promtool check config "$E2E_TMP/prometheus.yml"
prometheus_port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
prom="http://127.0.0.1:$prometheus_port"
spawn "$E2E_TMP/prometheus.log" prometheus --config.file "$E2E_TMP/prometheus.yml" --storage.tsdb.path "$E2E_TMP/prometheus-data" \
  --web.listen-address "127.0.0.1:$prometheus_port" --storage.tsdb.retention.time 1h
ready() { test "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$prom/-/ready")" = 200; }
check "Prometheus is ready" wait_until 30 ready

# query PROMQL: the result vector of an instant query, as JSON.
query() { curl -s --max-time 5 "$prom/api/v1/query" --data-urlencode "query=$1"; }
# has QUERY: the instant query has at least one series.
has() { test "$(json_get "$(query "$1")" "len(d['data']['result'])")" -gt 0 2>/dev/null; }
# value QUERY: the first series' value.
value() { json_get "$(query "$1")" "d['data']['result'][0]['value'][1]"; }
target_up() { test "$(json_get "$(curl -s --max-time 5 "$prom/api/v1/targets")" "[t['health'] for t in d['data']['activeTargets']]")" = "['up']"; }
check "the target is up: TLS verified with the CA, the bearer token authorized" wait_until 20 target_up

hpa=fedmetrics_horizontal_pod_autoscaler_controller
check "reconciliations_total{action,error} after a few syncs" \
  wait_until 20 has "${hpa}_reconciliations_total{job=\"fedmetrics\",error=\"none\"} > 0"
buckets() { test "$(value "count by (action) (${hpa}_reconciliation_duration_seconds_bucket{error=\"none\"})" 2>/dev/null)" = 16; }
check "reconciliation_duration_seconds: upstream's 15 exponential buckets from 1 ms, and +Inf" wait_until 10 buckets
check "the last bucket below +Inf is 16.384 s" has "${hpa}_reconciliation_duration_seconds_bucket{le=\"16.384\"}"
check "metric_computation_total{action,error,metric_type=\"Resource\"}" \
  has "${hpa}_metric_computation_total{metric_type=\"Resource\",error=\"none\"} > 0"
check "metric_computation_duration_seconds{metric_type=\"Resource\"}" \
  has "${hpa}_metric_computation_duration_seconds_count{metric_type=\"Resource\"} > 0"
check "current_replicas and desired_replicas of default/nginx" \
  has "${hpa}_desired_replicas{namespace=\"default\",hpa_name=\"nginx\"} >= 1 and on() ${hpa}_current_replicas{namespace=\"default\",hpa_name=\"nginx\"} >= 1"
check "num_horizontal_pod_autoscalers is 1" test "$(value "${hpa}_num_horizontal_pod_autoscalers")" = 1
check "leader_election_master_status{name=\"fedmetrics-autoscaler\"} is 1 (the only replica leads)" \
  test "$(value 'fedmetrics_leader_election_master_status{name="fedmetrics-autoscaler"}')" = 1

# Under the world's load (100m on 25m requests, target 10 %) the loop scales up.
replicas_above() { test "$(kk get deployment nginx -o jsonpath='{.spec.replicas}')" -gt "$1"; }
check "the loop scales nginx up" wait_until 40 replicas_above 2
check "a scale_up reconciliation without error is counted" \
  wait_until 10 has "${hpa}_reconciliations_total{action=\"scale_up\",error=\"none\"} > 0"
check "desired_replicas follows the status" \
  wait_until 10 has "${hpa}_desired_replicas{namespace=\"default\",hpa_name=\"nginx\"} > 2"

for m in process_cpu_seconds_total process_resident_memory_bytes process_virtual_memory_bytes process_open_fds \
  process_max_fds process_start_time_seconds; do
  check "$m" has "${m}{job=\"fedmetrics\"} > 0"
done
check "process_resident_memory_bytes is the process's resident set (within 4x of ps's)" \
  /usr/bin/python3 -c "import sys; a=float(sys.argv[1]); b=float(sys.argv[2])*1024; sys.exit(0 if b/4 < a < b*4 else 1)" \
  "$(value 'process_resident_memory_bytes{job="fedmetrics"}')" "$(ps -o rss= -p "$serve_pid")"
check "fedmetrics_build_info{version,git_commit,compiler} is 1" \
  has 'fedmetrics_build_info{version=~"v.+",git_commit!="",compiler!=""} == 1'

# The exposition itself: nothing for promtool to lint (names, units, help, types).
check "/metrics scraped again" test "$(scrape prometheus-token "$E2E_TMP/scrape.txt")" = 200
lint=$(promtool check metrics <"$E2E_TMP/scrape.txt" 2>&1) && lint_ok=1 || lint_ok=0
check "promtool check metrics is clean${lint:+: $lint}" test "$lint_ok" = 1 -a -z "$lint"
finish

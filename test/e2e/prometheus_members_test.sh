#!/usr/bin/env bash
# Members with a Prometheus and no prometheus-adapter: one real Prometheus
# per simulated member on loopback scrapes that member's pods (their request
# counters, http_requests_total{namespace,pod}, at the member's /metrics/pods),
# the members serve no custom.metrics.k8s.io themselves, and `fedmetrics
# serve --prometheus-rules` reads prometheus-adapter's stock http_requests
# rule: kubectl get --raw of the custom metrics paths answers across members
# from PromQL, and Karmada's sample-app FederatedHPA scales on it. Then a
# query Prometheus rejects (its own message), a Prometheus that stops (a
# Warning naming it), a Cluster annotation naming a member's Prometheus, and
# rules files refused at start-up.
# Usage: prometheus_members_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2
command -v prometheus >/dev/null || { echo "FAIL - prometheus is not installed (scripts/install-deps.sh installs Debian's prometheus)"; exit 1; }

# sample-app at 2 requests/s over one pod in each member; no member serves custom metrics.
cat >"$E2E_TMP/world.yaml" <<'YAML'
members:
  - name: member1
    metricsApis: [metrics.k8s.io/v1beta1]
  - name: member2
    metricsApis: [metrics.k8s.io/v1beta1]
workloads:
  - name: sample-app
    namespace: default
    replicas: 2
    labels: {app: sample-app}
    containers:
      - name: sample-app
        image: luxas/autoscale-demo:v0.1.2
        resources:
          requests: {cpu: 25m, memory: 64Mi}
    metrics: [http_requests]
    propagation:
      clusters: [member1, member2]
      weights: {member1: 1, member2: 1}
    load:
      requestsPerSecond: "2"
users:
  - name: karmada
    token: fedmetrics-sim-token
YAML
start_sim "$E2E_TMP/world.yaml"
members="$E2E_TMP/world/members.kubeconfig"
no_adapter=$(km member1 get --raw /apis/custom.metrics.k8s.io/v1beta2 2>&1 || true)
check "the members serve no custom.metrics.k8s.io of their own" grep -q NotFound <<<"$no_adapter"

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# start_prometheus MEMBER: a Prometheus scraping MEMBER's pods every second,
# as a kube-prometheus pod scrape labels them; sets prom_MEMBER (its URL) and pid_prom_MEMBER.
start_prometheus() {
  local member=$1 server dir="$E2E_TMP/prometheus-$1"
  mkdir -p "$dir"
  server=$(kubectl --kubeconfig "$members" config view --raw -o jsonpath="{.clusters[?(@.name==\"$member\")].cluster.server}")
  kubectl --kubeconfig "$members" config view --raw -o jsonpath="{.users[?(@.name==\"$member\")].user.token}" >"$dir/token"
  [ -s "$dir/token" ] || kubectl --kubeconfig "$members" config view --raw -o jsonpath='{.users[0].user.token}' >"$dir/token"
  cat >"$dir/prometheus.yml" <<YAML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: pods
    scheme: https
    metrics_path: /metrics/pods
    honor_labels: true
    tls_config: {insecure_skip_verify: true}
    authorization: {type: Bearer, credentials_file: $dir/token}
    static_configs: [{targets: ["${server#https://}"]}]
YAML
  local p
  p=$(free_port)
  spawn "$dir/prometheus.log" prometheus --config.file "$dir/prometheus.yml" --storage.tsdb.path "$dir/data" \
    --web.listen-address "127.0.0.1:$p" --storage.tsdb.retention.time 1h
  eval "pid_prom_$member=$spawned"
  eval "prom_$member=http://127.0.0.1:$p"
}
start_prometheus member1
start_prometheus member2
# scraped PROM: the pod series are in PROM's head already.
scraped() { test "$(json_get "$(curl -s --max-time 2 "$1/api/v1/query" --data-urlencode 'query=count(http_requests_total)')" "d['data']['result'][0]['value'][1]" 2>/dev/null)" = 1; }
check "each member's Prometheus scrapes its pod's http_requests_total" \
  wait_until 20 bash -c "$(declare -f scraped json_get); scraped $prom_member1 && scraped $prom_member2"

# prometheus-adapter's stock rule for http_requests and its stock
# resourceRules (examples/prometheus/rules.yaml), the rate window 10s
# instead of 2m: rate() over 2m reads low until two minutes of samples are in.
sed 's/\[2m\]/[10s]/' "$src/examples/prometheus/rules.yaml" >"$E2E_TMP/rules.yaml"
check "the rule read is the stock one but for its window" test "$(grep -c '\[10s\]' "$E2E_TMP/rules.yaml")" = 1
# And an external metric of the same counters: each member's request rate per namespace.
cat >>"$E2E_TMP/rules.yaml" <<'YAML'
externalRules:
- seriesQuery: '{__name__="http_requests_total",namespace!=""}'
  resources: {overrides: {namespace: {resource: namespace}}}
  name: {as: "requests_per_namespace"}
  metricsQuery: sum(rate(<<.Series>>{<<.LabelMatchers>>}[10s])) by (namespace)
YAML
start_serve "$E2E_TMP/serve.log" --member-kubeconfig "$members" --prometheus-rules "$E2E_TMP/rules.yaml" \
  --member-prometheus "member1=$prom_member1" --member-prometheus "member2=$prom_member2" \
  --metrics-relist-interval 2s --member-timeout 2s \
  --enable-autoscaler --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --horizontal-pod-autoscaler-sync-period 1s

path='/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/http_requests'
discovered() { k get --raw /apis/custom.metrics.k8s.io/v1beta2 2>/dev/null | grep -q '"pods/http_requests"'; }
check "discovery lists pods/http_requests from the relist of each member's series" wait_until 15 discovered
check "and namespaces/http_requests, cluster-scoped, as prometheus-adapter lists it" \
  test "$(json_get "$(k get --raw /apis/custom.metrics.k8s.io/v1beta2)" "[r['namespaced'] for r in d['resources'] if r['name'] == 'namespaces/http_requests']")" = "[False]"
# both_near_one: each pod's rate is about 1 request/s (2 over 2 pods).
both_near_one() {
  local raw
  raw=$(k get --raw "$path" 2>/dev/null) || return 1
  json_get "$raw" "len(d['items']) == 2 and all(0.8 <= (float(i['value'][:-1]) / 1000 if i['value'].endswith('m') else float(i['value'])) <= 1.2 for i in d['items'])" | grep -q True
}
check "every pod of both members, about 1 request/s each, from PromQL" wait_until 20 both_near_one
raw=$(k get --raw "$path")
pod1=$(km member1 get pods -l app=sample-app -o jsonpath='{.items[0].metadata.name}')
pod2=$(km member2 get pods -l app=sample-app -o jsonpath='{.items[0].metadata.name}')
check "the items are member1's pod and member2's" \
  test "$(json_get "$raw" "sorted(i['describedObject']['name'] for i in d['items'])")" = "$(json_get '[]' "sorted(['$pod1', '$pod2'])")"
only2=$(k get --raw "$path?metricLabelSelector=fedmetrics%2Fcluster%3Dmember2")
check "metricLabelSelector fedmetrics/cluster=member2 asks member2's Prometheus only" \
  test "$(json_get "$only2" "[i['describedObject']['name'] for i in d['items']]")" = "['$pod2']"
check "as prometheus-adapter writes them: Pod describedObject, v1beta2 MetricValueList" \
  test "$(json_get "$raw" "d['kind'], sorted({(i['describedObject']['kind'], i['describedObject']['apiVersion']) for i in d['items']})")" = "MetricValueList [('Pod', '/v1')]"
one=$(k get --raw "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/$pod1/http_requests")
check "one pod by name, in v1beta1 too" test "$(json_get "$one" "d['apiVersion'], len(d['items']), d['items'][0]['describedObject']['name']")" = "custom.metrics.k8s.io/v1beta1 1 $pod1"
ns=$(k get --raw /apis/custom.metrics.k8s.io/v1beta2/namespaces/default/metrics/http_requests)
check "the namespace's own metric: its members' values summed, about 2 requests/s" \
  test "$(json_get "$ns" "len(d['items']) == 1 and 1600 <= int(d['items'][0]['value'].rstrip('m')) <= 2400")" = True
check "a labelSelector that chooses no pod: no items" \
  test "$(json_get "$(k get --raw '/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/http_requests?labelSelector=app%3Dnone')" "len(d['items'])")" = 0
external='/apis/external.metrics.k8s.io/v1beta1/namespaces/default/requests_per_namespace'
external_both() {
  local raw
  raw=$(k get --raw "$external" 2>/dev/null) || return 1
  json_get "$raw" "sorted((i['metricLabels']['fedmetrics/cluster'], i['metricLabels']['namespace'], 800 <= int(i['value'].rstrip('m')) <= 1200) for i in d['items'])" |
    grep -qF "[('member1', 'default', True), ('member2', 'default', True)]"
}
check "an external metric from externalRules: each member's rate, its labels and fedmetrics/cluster" wait_until 10 external_both
resource=$(k get --raw /apis/metrics.k8s.io/v1beta1/namespaces/default/pods)
check "metrics.k8s.io from resourceRules: each member's pod, the rule's 5m window (the members' metrics-server says 15s)" \
  test "$(json_get "$resource" "sorted((i['metadata']['name'], i['window'], [c['name'] for c in i['containers']]) for i in d['items'])")" \
  = "$(json_get '[]' "sorted([('$pod1', '5m0s', ['sample-app']), ('$pod2', '5m0s', ['sample-app'])])")"
own=$(km member1 get --raw /apis/metrics.k8s.io/v1beta1/namespaces/default/pods)
check "the memory Prometheus scraped is what the member's own metrics-server answers" \
  test "$(json_get "$resource" "[i['containers'][0]['usage']['memory'] for i in d['items'] if i['metadata']['name'] == '$pod1']")" \
  = "$(json_get "$own" "[i['containers'][0]['usage']['memory'] for i in d['items']]")"
check "with the pod's own labels" test "$(json_get "$resource" "d['items'][0]['metadata']['labels']['app']")" = sample-app
missing=$(k get --raw '/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/no_such_metric' 2>&1 || true)
check "a metric no rule names: NotFound" grep -q 'could not find the metric' <<<"$missing"

# Karmada's sample-app walkthrough with no adapter in the members: its
# FederatedHPA (http_requests, 700m per pod) reads the pods' rates from each
# member's Prometheus; 1 request/s per pod scales 2 pods to 3.
replicas_are() { test "$(kk get deployment sample-app -o jsonpath='{.spec.replicas}')" = "$1"; }
check "kubectl apply the walkthrough's FederatedHPA" bash -c "kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' apply -f '$src/examples/federatedhpa/sample-app.yaml' >/dev/null"
check "it scales sample-app from 2 to 3 on the rates PromQL gives" wait_until 20 replicas_are 3
check "its status reads the pods metric http_requests" \
  test "$(kk get fhpa sample-app -o jsonpath='{.status.currentMetrics[0].pods.metric.name}')" = http_requests
# member1_pods: member1's pods now, as a Python list.
member1_pods() { json_get "$(km member1 get pods -l app=sample-app -o json)" "sorted(p['metadata']['name'] for p in d['items'])"; }

# A label name Prometheus cannot parse in the metric selector: its own error, per member.
rejected=$(k get --raw '/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/http_requests?metricLabelSelector=a.b%3Dc' 2>&1 || true)
check "a query Prometheus rejects answers with Prometheus' own message (bad_data)" grep -q 'bad_data' <<<"$rejected"

# member2's Prometheus stops: member1 still answers, member2 is a Warning naming its Prometheus.
kk delete fhpa sample-app >/dev/null
stop "$pid_prom_member2"
# (A pod the scale-up just made has a rate once Prometheus has two of its samples.)
partial_member1() {
  local partial
  partial=$(kubectl --kubeconfig "$E2E_TMP/kubeconfig" --request-timeout=10s get --raw "$path" 2>"$E2E_TMP/warnings")
  test "$(json_get "$partial" "sorted(i['describedObject']['name'] for i in d['items'])")" = "$(member1_pods)"
}
check "with member2's Prometheus down, member1's pods still answer" wait_until 10 partial_member1
check "and a Warning names member2" grep -q "member2: " "$E2E_TMP/warnings"
# (The Warning is its Prometheus' failure, or, once it failed three times in
# a row, that it is left out as not answering; the failure is logged either way.)
check "and member2's failure names its Prometheus" \
  grep -q "member2: refused: Prometheus $prom_member2: connect" "$E2E_TMP/warnings" "$E2E_TMP/serve.log"

# From Karmada's Cluster objects: member1's Cluster names its Prometheus in
# an annotation (with a companion Secret for its token); member2's names none.
kk create secret generic member1-prometheus -n default --from-literal=token=prometheus-token >/dev/null
check "kubectl annotate cluster member1 with its Prometheus" \
  kk annotate cluster member1 "metrics.fedmetrics.io/prometheus-url=$prom_member1" \
  metrics.fedmetrics.io/prometheus-secret=default/member1-prometheus >/dev/null
start_serve "$E2E_TMP/serve-karmada.log" --karmada-kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
  --prometheus-rules "$E2E_TMP/rules.yaml" --metrics-relist-interval 2s --member-timeout 2s
member1_only() { test "$(json_get "$(k get --raw "$path" 2>/dev/null)" "sorted(i['describedObject']['name'] for i in d['items'])" 2>/dev/null)" = "$(member1_pods)"; }
check "the annotated member answers from its Prometheus (member2 has none, and no adapter)" wait_until 15 member1_only

# Start-up errors name the file and the rule.
printf 'rules:\n- seriesQuery: x\n  name: {matches: "("}\n  metricsQuery: y\n' >"$E2E_TMP/bad-rules.yaml"
spawn "$E2E_TMP/bad.log" "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs-bad" \
  --insecure-development-no-auth --member-kubeconfig "$members" --prometheus-rules "$E2E_TMP/bad-rules.yaml" \
  --member-prometheus "member1=$prom_member1"
bad=$spawned
status=0; reap "$bad" || status=$?
check "a rules file with a regexp that does not parse: serve exits non-zero" test "$status" -ne 0
check "naming the file and the rule" grep -q "bad-rules.yaml: rules\[0\].name.matches" "$E2E_TMP/bad.log"
spawn "$E2E_TMP/nowhere.log" "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs-bad" \
  --insecure-development-no-auth --member-kubeconfig "$members" --prometheus-rules "$E2E_TMP/rules.yaml"
nowhere=$spawned
status=0; reap "$nowhere" || status=$?
check "--prometheus-rules without a Prometheus location is refused" \
  bash -c "test $status -ne 0 && grep -q 'give --prometheus-service or --member-prometheus' '$E2E_TMP/nowhere.log'"
finish

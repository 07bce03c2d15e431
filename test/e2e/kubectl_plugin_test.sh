#!/usr/bin/env bash
# `kubectl fedmetrics top pod|node`: the real kubectl finds the plugin
# (kubectl-fedmetrics, a link to the fedmetrics binary) on PATH and runs it
# against the simulated Karmada control plane, whose aggregation layer
# forwards metrics.k8s.io to `fedmetrics serve`. Checks kubectl top's columns
# plus CLUSTER, -A, -n (and the context's namespace), -l, --containers,
# --sort-by, node shares from each member's allocatable read through the
# cluster proxy, <unknown> shares when that proxy refuses, a failing
# member's Warning on stderr, and kubectl's errors and exit codes.
# Usage: kubectl_plugin_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

# The plugin as installed: a link named kubectl-fedmetrics, found on PATH.
mkdir -p "$E2E_TMP/plugins"
ln -s "$(readlink -f "$bin")" "$E2E_TMP/plugins/kubectl-fedmetrics"
export PATH="$E2E_TMP/plugins:$PATH"
unset KUBECONFIG

# Three members: nginx in default on member1 and member2, a two-container
# worker in namespace jobs on member3; member2's node is bigger. The worker
# uses more memory than an nginx pod (200Mi, 16Mi), so that sorting by memory
# changes the order of the pods and of the nodes.
bash "$src/certs/generate.sh" "$E2E_TMP/certs" fedmetrics fedmetrics-system >/dev/null
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$E2E_TMP/world.yaml" <<YAML
members:
  - name: member1
    nodes: 1
  - name: member2
    nodes: [{name: member2-node-1, cpu: "8", memory: 32Gi, labels: {zone: b}}]
  - name: member3
    nodes: 1
namespaces: [jobs]
workloads:
  - name: nginx
    namespace: default
    replicas: 2
    labels: {app: nginx}
    containers:
      - name: nginx
        image: nginx
        resources: {requests: {cpu: 25m, memory: 64Mi}, limits: {cpu: 25m, memory: 64Mi}}
    propagation: {clusters: [member1, member2], weights: {member1: 1, member2: 1}}
    load: {cpu: 40m}
    baseline: {memory: 16Mi}
  - name: worker
    namespace: jobs
    replicas: 1
    labels: {app: worker}
    containers:
      - name: worker
        image: worker
        resources: {requests: {cpu: 500m, memory: 256Mi}, limits: {cpu: "1", memory: 512Mi}}
      - name: log-shipper
        image: shipper
        resources: {requests: {cpu: 10m, memory: 32Mi}}
    propagation: {clusters: [member3]}
    load: {cpu: 300m}
    baseline: {memory: 200Mi}
users:
  - name: admin
    token: admin-token
    groups: [system:masters]
  - name: viewer
    token: viewer-token
    rules:
      - verbs: [get, list, watch]
        apiGroups: ["", metrics.k8s.io]
        resources: ["*"]
aggregation:
  address: 127.0.0.1
  port: $port
  caFile: certs/ca.crt
YAML
start_sim "$E2E_TMP/world.yaml"
# The faults below fail member2's connections several times in a row on
# purpose, to show each failure's Warning; failing fast would leave member2
# out after the third (merge_rules_test shows that), so it is off here.
start_aggregated_serve 1s --member-failure-threshold 0
kk wait --for=condition=Available --timeout=10s apiservice/v1beta1.metrics.k8s.io >/dev/null 2>&1

admin_config="$E2E_TMP/world/karmada.kubeconfig"
kf() { kubectl fedmetrics --kubeconfig "$admin_config" --request-timeout 10s "$@"; }
# run NAME CMD...: CMD's stdout, stderr and status in $E2E_TMP/NAME.{out,err,rc}.
run() {
  local name=$1; shift
  set +e; "$@" >"$E2E_TMP/$name.out" 2>"$E2E_TMP/$name.err"; echo $? >"$E2E_TMP/$name.rc"; set -e
}
out() { cat "$E2E_TMP/$1.out"; }
err() { cat "$E2E_TMP/$1.err"; }
rc() { cat "$E2E_TMP/$1.rc"; }
column() { awk -v n="$1" '{print $n}'; }  # column N of each line
# is_descending: the numbers (one a line, units stripped) never grow.
is_descending() { sed 's/[a-zA-Z]*$//' | sort -c -n -r 2>/dev/null; }

plugins=$(kubectl plugin list 2>&1 || true)
check "kubectl plugin list finds kubectl-fedmetrics on PATH" grep -q "$E2E_TMP/plugins/kubectl-fedmetrics" <<<"$plugins"

# top pod -A: kubectl top's columns, CLUSTER after NAME, sorted by namespace then name.
run all kf top pod -A
echo "--- kubectl fedmetrics top pod -A"; out all; err all
check "top pod -A exits 0 with nothing on stderr" test "$(rc all) $(err all | wc -c)" = "0 0"
check "the header is kubectl top pod -A's with CLUSTER" \
  test "$(out all | head -1 | tr -s ' ')" = "NAMESPACE NAME CLUSTER CPU(cores) MEMORY(bytes) "
check "one row per pod of every member, each naming its member" \
  test "$(out all | tail -n +2 | awk '{print $1, $3}' | sort | tr '\n' ,)" = "default member1,default member2,jobs member3,"
check "cpu as {milli}m and memory as {Mi}Mi" \
  test "$(out all | tail -n +2 | awk '$4 ~ /^[0-9]+m$/ && $5 ~ /^[0-9]+Mi$/' | wc -l)" = 3
kubectl_pods=$(kk top pod -A --no-headers | awk '{print $1, $2}')
check "the same pods as kubectl top pod -A through the control plane" \
  test "$(out all | tail -n +2 | awk '{print $1, $2}')" = "$kubectl_pods"
# without_cluster: the table with its CLUSTER column cut out (the columns are aligned).
without_cluster() {
  awk 'NR == 1 { from = index($0, "CLUSTER"); to = index($0, "CPU(cores)") }
       { print substr($0, 1, from - 1) substr($0, to) }'
}
check "byte for byte kubectl top pod -A's table but for CLUSTER (the simulated load is steady)" \
  test "$(out all | without_cluster | cat -A)" = "$(kk top pod -A | cat -A)"

# -n, the context's namespace, -l.
run ns kf top pod -n jobs --no-headers
check "top pod -n jobs: the worker pod of member3 only" \
  test "$(out ns | awk '{print $2}' | tr '\n' ,)" = "member3,"
run default kf top pod
check "without -n: the context's namespace, else default (no NAMESPACE column)" \
  test "$(out default | head -1 | tr -s ' ') $(out default | tail -n +2 | column 1 | grep -c '^nginx-')" = "NAME CLUSTER CPU(cores) MEMORY(bytes)  2"
kubectl config --kubeconfig "$admin_config" view --raw >"$E2E_TMP/jobs.kubeconfig"
kubectl config --kubeconfig "$E2E_TMP/jobs.kubeconfig" set-context --current --namespace=jobs >/dev/null
run ctxns env KUBECONFIG="$E2E_TMP/no-such-file:$E2E_TMP/jobs.kubeconfig" kubectl fedmetrics top pod --no-headers
check "KUBECONFIG (a list, a missing file skipped): the context's namespace is the default" \
  test "$(rc ctxns) $(out ctxns | column 2 | tr '\n' ,)" = "0 member3,"
run ctxflag kf --context no-such-context top pod
check "--context naming no context: kubectl's error, exit 1" \
  test "$(rc ctxflag) $(err ctxflag)" = '1 error: context "no-such-context" does not exist'
run label kf top pod -A -l app=nginx --no-headers
check "-l app=nginx: the nginx pods of member1 and member2" \
  test "$(out label | awk '{print $1, $3}' | sort | tr '\n' ,)" = "default member1,default member2,"
run bymember kf top pod -A -l fedmetrics/cluster=member2 --no-headers
check "-l fedmetrics/cluster=member2: that member's pods only" test "$(out bymember | column 3 | tr '\n' ,)" = "member2,"
pod=$(out label | head -1 | column 2)
pod_member=$(out label | head -1 | column 3)
run named kf top pod "$pod" --no-headers
check "a pod by name ($pod of $pod_member)" test "$(out named | awk '{print $1, $2}')" = "$pod $pod_member"

# --containers: one row per container under its pod.
run containers kf top pod -n jobs --containers
check "--containers: POD NAME CLUSTER header" \
  test "$(out containers | head -1 | tr -s ' ')" = "POD NAME CLUSTER CPU(cores) MEMORY(bytes) "
check "--containers: the worker pod's two containers, by name" \
  test "$(out containers | tail -n +2 | awk '{print $2, $3}' | tr '\n' ,)" = "log-shipper member3,worker member3,"

# --sort-by: largest first.
run bycpu kf top pod -A --sort-by cpu --no-headers
check "--sort-by cpu: cpu never grows down the list (the loaded worker first)" \
  test "$(out bycpu | column 4 | is_descending && echo sorted) $(out bycpu | head -1 | column 1)" = "sorted jobs"
run bymem kf top pod -A --sort-by memory --no-headers
check "--sort-by memory: memory never grows down the list (the worker first, not in namespace order)" \
  test "$(out bymem | column 5 | is_descending && echo sorted) $(out bymem | head -1 | column 1)" = "sorted jobs"
run badsort kf top pod --sort-by name
check "--sort-by name: kubectl's error, exit 1" \
  test "$(rc badsort) $(err badsort)" = "1 error: --sort-by accepts only cpu or memory"

# top node: shares of each member's own allocatable, read through the cluster proxy.
run nodes kf top node
echo "--- kubectl fedmetrics top node"; out nodes
check "top node exits 0 with nothing on stderr" test "$(rc nodes) $(err nodes | wc -c)" = "0 0"
check "the header is kubectl top node's with CLUSTER" \
  test "$(out nodes | head -1 | tr -s ' ')" = "NAME CLUSTER CPU(cores) CPU(%) MEMORY(bytes) MEMORY(%) "
check "a node of every member, each naming its member" \
  test "$(out nodes | tail -n +2 | awk '{print $1, $2}' | tr '\n' ,)" = \
       "member1-node-1 member1,member2-node-1 member2,member3-node-1 member3,"
share() {  # share USAGE ALLOCATABLE_MILLI: kubectl's trunc(usage milli / allocatable milli * 100)
  /usr/bin/python3 -c 'import sys; u=sys.argv[1]; m=int(u[:-1]) if u.endswith("m") else int(u[:-2])*1048576*1000; print(str(int(m/int(sys.argv[2])*100))+"%")' "$1" "$2"
}
row2=$(out nodes | grep '^member2-node-1')
alloc_cpu=$(km member2 get node member2-node-1 -o jsonpath='{.status.allocatable.cpu}')
check "member2's node allocatable, as its API server reports it, is 8 cpu" test "$alloc_cpu" = 8
check "CPU(%) of member2's node: its cpu over 8000m" test "$(column 4 <<<"$row2")" = "$(share "$(column 3 <<<"$row2")" 8000)"
check "MEMORY(%) of member2's node: its memory over 32Gi" \
  test "$(column 6 <<<"$row2")" = "$(share "$(column 5 <<<"$row2")" $((32 * 1024 * 1048576 * 1000)))"
row1=$(out nodes | grep '^member1-node-1')
check "CPU(%) of member1's node: its cpu over 4000m" test "$(column 4 <<<"$row1")" = "$(share "$(column 3 <<<"$row1")" 4000)"
run nodes2 kf top node -l fedmetrics/cluster=member2 --sort-by memory --no-headers
check "top node -l fedmetrics/cluster=member2: that member's node only" test "$(out nodes2 | column 1 | tr '\n' ,)" = "member2-node-1,"
run nodesbymem kf top node --sort-by memory --no-headers
check "top node --sort-by memory: memory never grows down the list (member3's node, the worker's, first)" \
  test "$(out nodesbymem | column 5 | is_descending && echo sorted) $(out nodesbymem | head -1 | column 1)" = "sorted member3-node-1"
run nodelabel kf top node -l zone=b --no-headers
check "top node -l zone=b: the labelled node" test "$(out nodelabel | column 1 | tr '\n' ,)" = "member2-node-1,"

# A user who may read metrics but not the cluster proxy: shares unknown, a warning each, no failure.
sed "s/token: .*/token: viewer-token/" "$admin_config" >"$E2E_TMP/viewer.kubeconfig"
run viewer kubectl fedmetrics --kubeconfig "$E2E_TMP/viewer.kubeconfig" top node --no-headers
check "a user without the cluster proxy: exit 0, every share <unknown>" \
  test "$(rc viewer) $(out viewer | awk '$4 == "<unknown>" && $6 == "<unknown>" && $3 ~ /m$/' | wc -l)" = "0 3"
check "and a warning per member naming it" \
  test "$(err viewer | grep -c '^Warning: member[123]: its nodes could not be read through the cluster proxy.*Forbidden')" = 3

# A member that fails: its Warning on stderr as kubectl prints it, the others' rows on stdout.
curl -sk -X PUT "$control/sim/v1/members/member2/faults" -d '{"refuse":true}' >/dev/null
run broken kf top pod -A --no-headers
check "a refusing member2: exit 0, the other members' pods" \
  test "$(rc broken) $(out broken | column 3 | tr '\n' ,)" = "0 member1,member3,"
check "and fedmetrics' Warning about member2 on stderr as kubectl prints it" grep -q '^Warning: member2' "$E2E_TMP/broken.err"
kubectl_warning=$(kk top pod -A --no-headers 2>&1 >/dev/null | grep '^Warning: member2' | head -1)
check "the same Warning line kubectl top prints" grep -qxF "$kubectl_warning" "$E2E_TMP/broken.err"
run brokennodes kf top node --no-headers
check "top node with member2 refusing: exit 0, member2's node left out, a Warning" \
  test "$(rc brokennodes) $(out brokennodes | column 2 | tr '\n' ,) $(grep -c '^Warning: member2' "$E2E_TMP/brokennodes.err")" \
  = "0 member1,member3, 1"

# A member that answers an error status: the status said once in its Warning.
curl -sk -X PUT "$control/sim/v1/members/member2/faults" -d '{"errorRate":1}' >/dev/null
run failing kf top pod -A --no-headers
warning=$(grep '^Warning: member2' "$E2E_TMP/failing.err" || true)
check "a member answering 500: exit 0, its Warning says HTTP 500 once, with the member's message ($warning)" \
  test "$(rc failing) $warning" = "0 Warning: member2: HTTP 500: Internal error occurred: simulated fault"
curl -sk -X PUT "$control/sim/v1/members/member2/faults" -d '{"refuse":true}' >/dev/null

# Every member failing: the server's error, as kubectl prints it, exit 1.
for m in member1 member3; do curl -sk -X PUT "$control/sim/v1/members/$m/faults" -d '{"refuse":true}' >/dev/null; done
run allbroken kf top pod -A
check "every member refusing: Error from server (ServiceUnavailable), exit 1" \
  test "$(rc allbroken) $(grep -c '^Error from server (ServiceUnavailable): ' "$E2E_TMP/allbroken.err")" = "1 1"
for m in member1 member2 member3; do curl -sk -X DELETE "$control/sim/v1/members/$m/faults" >/dev/null; done

# kubectl's other errors and exit codes.
run notfound kf top pod no-such-pod
check "a pod no member has: Error from server (NotFound), exit 1" \
  test "$(rc notfound) $(grep -c '^Error from server (NotFound): ' "$E2E_TMP/notfound.err")" = "1 1"
run both kf top pod some-pod -l app=nginx
check "NAME and a selector: kubectl's error, exit 1" \
  test "$(rc both) $(err both)" = "1 error: only one of NAME or selector can be provided"
sed "s#server: .*#server: https://127.0.0.1:1#" "$admin_config" >"$E2E_TMP/closed.kubeconfig"
run refused kubectl fedmetrics --kubeconfig "$E2E_TMP/closed.kubeconfig" top pod
check "a server that refuses: kubectl's connection error, exit 1" \
  test "$(rc refused) $(err refused)" = \
       "1 The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?"
run badflag kf top pod --no-such-flag
check "an unknown flag: an error and where to find help, exit 1" \
  test "$(rc badflag) $(err badflag | tail -1)" = "1 See 'kubectl fedmetrics top pod --help' for usage."

# --help on every command, naming its flags, exit 0.
for cmd in "" "top" "top pod" "top node"; do
  # shellcheck disable=SC2086
  run help kubectl fedmetrics $cmd --help
  check "kubectl fedmetrics $cmd --help: exit 0, usage on stdout" test "$(rc help) $(out help | grep -c '^Usage: ')" = "0 1"
done
run help kubectl fedmetrics top pod --help
check "top pod --help names -A, -l, --containers, --sort-by, -n and --kubeconfig" \
  test "$(out help | grep -cE -- '-A,|-l,|--containers|--sort-by|-n,|--kubeconfig')" -ge 6
run help kubectl fedmetrics top node --help
check "top node --help names -l, --sort-by and the shares" \
  test "$(out help | grep -cE -- '-l,|--sort-by|allocatable')" -ge 3
finish

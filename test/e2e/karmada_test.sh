#!/usr/bin/env bash
# End to end through the simulated Karmada control plane: the real kubectl
# and Python client against karmada-apiserver (Cluster objects, Secrets,
# Deployments and their scale, FederatedHPA CRUD/status/watch, Leases,
# TokenReview/SubjectAccessReview, the cluster proxy), and the aggregation
# layer: `kubectl top pod` against the control plane goes control plane ->
# fedmetrics serve (front-proxy certificate + X-Remote-* headers, delegated
# authorization) -> the members.
# Then a FederatedHPA on a workload with overflow affinities: its scale-up
# fills the primary group (member3) and spills over to member2, and its
# scale-down gives member2's replicas back first.
# Usage: karmada_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/test/e2e/karmada.world.yaml" --watch-history 10
members() { kubectl --kubeconfig "$E2E_TMP/world/members.kubeconfig" --request-timeout=10s "$@"; }
admin_token=admin-token
viewer_token=viewer-token
raw() {  # raw METHOD PATH [BODY [CONTENT_TYPE]] -> "CODE BODY"
  curl -sk -o "$E2E_TMP/raw.out" -w '%{http_code}' -X "$1" "$karmada$2" -H "Authorization: Bearer ${TOKEN:-$admin_token}" \
    ${3:+-d "$3"} -H "Content-Type: ${4:-application/json}"
  echo " $(cat "$E2E_TMP/raw.out")"
}

# Cluster objects, as karmadactl get clusters shows them.
clusters=$(kk get clusters.cluster.karmada.io --no-headers)
check "three Cluster objects, Push mode, Ready" test "$(grep -c 'Push *True' <<<"$clusters")" -eq 3
endpoint=$(kk get clusters.cluster.karmada.io member2 -o jsonpath='{.spec.apiEndpoint}')
check "spec.apiEndpoint is member2's URL" grep -q "$endpoint" "$E2E_TMP/sim.log"
token=$(kk get secret -n karmada-cluster member2 -o jsonpath='{.data.token}' | base64 -d)
check "the Cluster's secretRef Secret holds a token member2 accepts" \
  test "$(curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$endpoint/api/v1/namespaces/default/pods")" = 200
proxied=$(kk get --raw /apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/api/v1/namespaces/default/pods)
check "the cluster proxy forwards to member1's API server" \
  test "$(json_get "$proxied" "sorted(set(p['metadata']['labels']['app'] for p in d['items']))")" = "['nginx']"
# A namespace's status subresource is the namespace (namespaces/{name}/status
# names the namespace itself, as apiserver's request info reads it).
ns_status=$(kk get --raw /api/v1/namespaces/default/status || true)
check "namespaces/default/status is the Namespace default" \
  test "$(json_get "$ns_status" "d['kind'] + '/' + d['metadata']['name']")" = Namespace/default

# Deployments and the scale subresource drive the simulated pods.
check "kubectl get deployment nginx" kk get deployment nginx
kk scale deployment nginx --replicas=4 >/dev/null
check "kubectl scale to 4 divides the replicas 2:2 over member1 and member2" \
  test "$(members --context member1 get pods -l app=nginx --no-headers | wc -l) $(members --context member2 get pods -l app=nginx --no-headers | wc -l)" = "2 2"
hashes=$(for m in member1 member2; do members --context $m get pods -l app=nginx -L pod-template-hash --no-headers; done | awk '{print $NF}' | sort -u)
check "one pod-template-hash for the one template in both members ($(echo $hashes))" test "$(wc -w <<<"$hashes")" -eq 1
check "each pod's name carries that hash" \
  test "$(for m in member1 member2; do members --context $m get pods -l app=nginx --no-headers; done | grep -c "^nginx-$hashes-")" -eq 4
# kube-apiserver's Deployment columns, on the control plane and through a member's own API.
wide=$(kk get deploy -o wide 2>&1 || true)
echo "$wide" | sed 's/^/    /'
check "get deploy -o wide: NAME READY UP-TO-DATE AVAILABLE AGE CONTAINERS IMAGES SELECTOR" \
  grep -Eq '^NAME +READY +UP-TO-DATE +AVAILABLE +AGE +CONTAINERS +IMAGES +SELECTOR$' <<<"$wide"
check "the wide cells: the container, its image, the selector" grep -Eq '^nginx +[0-9]+/4 .* nginx +nginx +app=nginx$' <<<"$wide"
check "without -o wide, no wide columns" grep -Eq '^NAME +READY +UP-TO-DATE +AVAILABLE +AGE$' <<<"$(kk get deploy 2>&1)"
member_deploy=$(members --context member1 get deploy 2>&1 || true)
echo "$member_deploy" | sed 's/^/    /'
check "a member's get deploy: NAME READY UP-TO-DATE AVAILABLE AGE" \
  grep -Eq '^NAME +READY +UP-TO-DATE +AVAILABLE +AGE$' <<<"$member_deploy"
check "member1's row: its share of 2" grep -Eq '^nginx +[0-9]/2 +[0-9] +[0-9] +[0-9]+[smhd]' <<<"$member_deploy"
check "a member's get deploy -o wide adds CONTAINERS IMAGES SELECTOR" \
  grep -Eq '^nginx +.* nginx +nginx +app=nginx$' <<<"$(members --context member2 get deploy -o wide --no-headers 2>&1)"
scale=$(kk get --raw /apis/apps/v1/namespaces/default/deployments/nginx/scale)
check "scale subresource: autoscaling/v1 Scale with status.selector" \
  test "$(json_get "$scale" "(d['kind'], d['spec']['replicas'], d['status']['selector'])")" = "('Scale', 4, 'app=nginx')"
rv=$(json_get "$scale" "d['metadata']['resourceVersion']")
kk scale deployment nginx --replicas=3 >/dev/null
stale=$(raw PUT /apis/apps/v1/namespaces/default/deployments/nginx/scale \
  "{\"kind\":\"Scale\",\"apiVersion\":\"autoscaling/v1\",\"metadata\":{\"name\":\"nginx\",\"namespace\":\"default\",\"resourceVersion\":\"$rv\"},\"spec\":{\"replicas\":9}}")
check "a scale update with a stale resourceVersion is 409 Conflict" grep -q '^409 .*the object has been modified' <<<"$stale"
check "and changes nothing" test "$(kk get deployment nginx -o jsonpath='{.spec.replicas}')" = 3

# FederatedHPA: create, get, list, status, watch, delete.
cp "$src/examples/federatedhpa/nginx.yaml" "$E2E_TMP/fhpa.yaml"
check "kubectl create -f a FederatedHPA" kk create -f "$E2E_TMP/fhpa.yaml"
check "kubectl get federatedhpas.autoscaling.karmada.io shows its columns" \
  grep -q 'nginx *Deployment *nginx *1 *10' <<<"$(kk get federatedhpas.autoscaling.karmada.io --no-headers)"
check "and the short name fhpa" kk get fhpa nginx
dup=$(kk create -f "$E2E_TMP/fhpa.yaml" 2>&1 || true)
check "creating it twice is AlreadyExists" grep -q 'AlreadyExists\|already exists' <<<"$dup"
status=$(raw PATCH /apis/autoscaling.karmada.io/v1alpha1/namespaces/default/federatedhpas/nginx/status \
  '{"status":{"currentReplicas":3,"desiredReplicas":3}}' application/merge-patch+json)
check "the status subresource takes status" test "$(kk get fhpa nginx -o jsonpath='{.status.desiredReplicas}')" = 3
spec_via_status=$(raw PATCH /apis/autoscaling.karmada.io/v1alpha1/namespaces/default/federatedhpas/nginx/status \
  '{"spec":{"maxReplicas":99}}' application/merge-patch+json)
check "and ignores spec" test "$(kk get fhpa nginx -o jsonpath='{.spec.maxReplicas}')" = 10
watch_rv=$(kk get fhpa nginx -o jsonpath='{.metadata.resourceVersion}')
# -v=6 logs the requests: the changes are made once the watch is open.
spawn "$E2E_TMP/watch.out" kubectl -v=6 --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" get fhpa --watch-only -o name
watch_pid=$spawned
check "the watch is open (kubectl -v=6 logged its GET ...watch=true: 200)" wait_for_log "$E2E_TMP/watch.out" 'watch=true.* 200 OK' 20
kk patch fhpa nginx --type=merge -p '{"spec":{"maxReplicas":12}}' >/dev/null
kk delete fhpa nginx >/dev/null
check "kubectl get --watch sees the change" wait_for_log "$E2E_TMP/watch.out" '^federatedhpa.autoscaling.karmada.io/nginx' 10
stop "$watch_pid" KILL  # kubectl ends a watch with status 1 on SIGTERM
py=$(/usr/bin/python3 - "$E2E_TMP/world/karmada.kubeconfig" "$watch_rv" <<'PY'
import sys
from kubernetes import client, config, watch
config.load_kube_config(config_file=sys.argv[1])
api = client.CustomObjectsApi()
events = [(e["type"], e["object"]["spec"]["maxReplicas"]) for e in watch.Watch().stream(
    api.list_namespaced_custom_object, "autoscaling.karmada.io", "v1alpha1", "default", "federatedhpas",
    resource_version=sys.argv[2], timeout_seconds=1)]
print(events)
PY
)
check "python watch from a resourceVersion replays MODIFIED then DELETED" test "$py" = "[('MODIFIED', 12), ('DELETED', 12)]"
gone=$(raw GET "/apis/autoscaling.karmada.io/v1alpha1/namespaces/default/federatedhpas?watch=true&resourceVersion=1&timeoutSeconds=1")
check "a watch from a compacted resourceVersion gets 410 Expired" grep -q '"code":410' <<<"$gone"

# Leases: optimistic concurrency for leader election.
lease='{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"fedmetrics"},"spec":{"holderIdentity":"a"}}'
created=$(raw POST /apis/coordination.k8s.io/v1/namespaces/kube-system/leases "$lease")
check "create a Lease" grep -q '^201 ' <<<"$created"
lease_rv=$(json_get "${created#* }" "d['metadata']['resourceVersion']")
took=$(raw PUT /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/fedmetrics \
  "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"fedmetrics\",\"resourceVersion\":\"$lease_rv\"},\"spec\":{\"holderIdentity\":\"b\"}}")
check "the holder with the current resourceVersion takes it" grep -q '^200 ' <<<"$took"
lost=$(raw PUT /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/fedmetrics \
  "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"fedmetrics\",\"resourceVersion\":\"$lease_rv\"},\"spec\":{\"holderIdentity\":\"c\"}}")
check "a contender with the old one gets 409" grep -q '^409 ' <<<"$lost"

# Authentication and authorization from the world's users.
check "no token: 401" grep -q '^401 ' <<<"$(TOKEN=nope raw GET /apis/apps/v1/deployments)"
check "the viewer may list deployments" grep -q '^200 ' <<<"$(TOKEN=$viewer_token raw GET /apis/apps/v1/deployments)"
denied=$(TOKEN=$viewer_token raw DELETE /apis/apps/v1/namespaces/default/deployments/nginx)
check "and may not delete one: 403 with apiserver's wording" \
  grep -q '^403 .*User \\"viewer\\" cannot delete resource \\"deployments\\" in API group \\"apps\\" in the namespace \\"default\\"' <<<"$denied"
review=$(raw POST /apis/authentication.k8s.io/v1/tokenreviews '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"viewer-token"}}')
check "TokenReview authenticates the viewer's token with its groups" \
  test "$(json_get "${review#* }" "(d['status']['authenticated'], d['status']['user']['username'], 'system:authenticated' in d['status']['user']['groups'])")" = "(True, 'viewer', True)"
sar() {
  raw POST /apis/authorization.k8s.io/v1/subjectaccessreviews \
    "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\",\"spec\":{\"user\":\"viewer\",\"resourceAttributes\":$1}}"
}
check "SubjectAccessReview allows the viewer's pod metrics" \
  grep -q '"allowed":true' <<<"$(sar '{"verb":"list","group":"metrics.k8s.io","resource":"pods","namespace":"default"}')"
check "and denies updating a Deployment's scale" \
  grep -q '"allowed":false' <<<"$(sar '{"verb":"update","group":"apps","resource":"deployments","subresource":"scale","namespace":"default","name":"nginx"}')"
# The shipped manifests validate and apply as on a real control plane.
check "kubectl apply --dry-run=client -k deploy/ (the base)" kk apply --dry-run=client -k "$src/deploy/"
check "kubectl apply --dry-run=client -f deploy/member-hpa-rbac.yaml" kk apply --dry-run=client -f "$src/deploy/member-hpa-rbac.yaml"
check "kubectl apply -f deploy/base/control-plane.yaml (RBAC and the ServiceAccount)" \
  kk apply -f "$src/deploy/base/namespace.yaml" -f "$src/deploy/base/control-plane.yaml"
check "the fedmetrics ClusterRole is there with its rules" \
  grep -q 'federatedhpas/status' <<<"$(kk get clusterrole fedmetrics -o jsonpath='{.rules}')"

# The install guide's step 3, as written there: a token for the ServiceAccount,
# a kubeconfig with it, and what that identity may do (the RBAC just applied).
sa_token=$(kk -n fedmetrics-system create token fedmetrics --duration=8760h 2>&1 || true)
check "kubectl create token fedmetrics prints a token" grep -Eq '^[A-Za-z0-9._-]{20,}$' <<<"$sa_token"
cp "$E2E_TMP/world/karmada.kubeconfig" "$E2E_TMP/sa.config"
kubectl --kubeconfig "$E2E_TMP/sa.config" config set-credentials fedmetrics --token="$sa_token" >/dev/null
kubectl --kubeconfig "$E2E_TMP/sa.config" config set-context --current --user=fedmetrics >/dev/null
ksa() { kubectl --kubeconfig "$E2E_TMP/sa.config" --request-timeout=10s "$@"; }
check "the ServiceAccount may list Clusters (auth can-i: yes)" \
  test "$(ksa auth can-i list clusters.cluster.karmada.io 2>/dev/null)" = yes
check "and may not delete them (auth can-i: no)" \
  test "$(ksa auth can-i delete clusters.cluster.karmada.io 2>/dev/null)" = no
check "it may read the authentication ConfigMap in kube-system only (a RoleBinding)" \
  test "$(ksa auth can-i get configmaps/extension-apiserver-authentication -n kube-system 2>&1) $(ksa auth can-i get configmaps/extension-apiserver-authentication -n default 2>&1)" = "yes no"
check "a request with the token is the ServiceAccount's: it lists Clusters" \
  test "$(ksa get clusters.cluster.karmada.io --no-headers 2>&1 | wc -l)" -eq 3
sa_denied=$(ksa delete clusters.cluster.karmada.io member3 2>&1 || true)
check "and is refused a delete as system:serviceaccount:fedmetrics-system:fedmetrics" \
  grep -q 'User "system:serviceaccount:fedmetrics-system:fedmetrics" cannot delete resource "clusters"' <<<"$sa_denied"
whoami=$(ksa auth whoami 2>&1 || true)
echo "$whoami" | sed 's/^/    /'
check "kubectl auth whoami names the ServiceAccount" \
  grep -Eq '^Username +system:serviceaccount:fedmetrics-system:fedmetrics$' <<<"$whoami"
check "with its groups" grep -Eq '^Groups +\[system:serviceaccounts system:serviceaccounts:fedmetrics-system system:authenticated\]$' <<<"$whoami"
sa_review=$(raw POST /apis/authentication.k8s.io/v1/tokenreviews "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenReview\",\"spec\":{\"token\":\"$sa_token\"}}")
check "TokenReview authenticates the ServiceAccount's token" \
  test "$(json_get "${sa_review#* }" "(d['status']['authenticated'], d['status']['user']['username'])")" = "(True, 'system:serviceaccount:fedmetrics-system:fedmetrics')"
short=$(kk -n fedmetrics-system create token fedmetrics --duration=5m 2>&1 || true)
check "a token shorter than 10 minutes is refused as kube-apiserver does" \
  grep -q 'may not specify a duration less than 10 minutes' <<<"$short"
check "no token for a ServiceAccount that does not exist" \
  grep -q 'serviceaccounts "nobody" not found' <<<"$(kk -n fedmetrics-system create token nobody 2>&1 || true)"
# The world's users: can-i follows their rules, whoami their name.
kviewer() { kubectl --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --token="$viewer_token" --request-timeout=10s "$@"; }
check "the viewer can list deployments (auth can-i: yes)" test "$(kviewer auth can-i list deployments 2>&1)" = yes
check "the viewer cannot delete them (auth can-i: no)" test "$(kviewer auth can-i delete deployments 2>&1)" = no
check "kubectl auth whoami as the admin" grep -Eq '^Username +admin$' <<<"$(kk auth whoami 2>&1)"
check "the admin may do anything (system:masters)" test "$(kk auth can-i delete clusters.cluster.karmada.io 2>/dev/null)" = yes
check "bad JSON is 400" grep -q '^400 ' <<<"$(raw POST /apis/coordination.k8s.io/v1/namespaces/kube-system/leases '{not json')"
check "an unknown resource is 404" grep -q '^404 ' <<<"$(raw GET /apis/apps/v1/namespaces/default/widgets)"
check "the deprecated form with the verb in the path is not served (404)" \
  grep -q '^404 ' <<<"$(raw GET /apis/apps/v1/watch/namespaces/default/deployments)"
check "a namespace named watch is no verb" grep -q '^200 ' <<<"$(raw GET /apis/apps/v1/namespaces/watch/deployments)"
check "a bad label selector is 400" grep -q '^400 ' <<<"$(raw GET '/apis/apps/v1/deployments?labelSelector=a%20in%20(b')"

# Overflow affinities under the autoscaler: burst (400m pods), scaled to 1
# replica, starts in member3, whose node has room for 2; the loop (3 s
# period, the pods trusted at once) scales it to maxReplicas 4 under load
# and back to minReplicas 2 without.
placement() { kk get resourcebinding burst-deployment -o jsonpath='{range .spec.clusters[*]}{.name}={.replicas} {end}'; }
placement_is() { test "$(placement)" = "$1"; }
burst_pods() { members --context "$1" get pods -l app=burst --no-headers 2>/dev/null | wc -l; }
burst_pods_are() { test "$(burst_pods member3) $(burst_pods member2)" = "$1"; }
kk scale deployment burst --replicas=1 >/dev/null
check "burst starts in the primary group: member3=1" placement_is "member3=1 "
start_serve "$E2E_TMP/serve.log" --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
  --enable-autoscaler --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
  --horizontal-pod-autoscaler-sync-period 3s --horizontal-pod-autoscaler-cpu-initialization-period 1s \
  --horizontal-pod-autoscaler-initial-readiness-delay 1s
kk apply -f - >/dev/null <<'YAML'
apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: burst, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: burst}
  minReplicas: 2
  maxReplicas: 4
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 0}
YAML
check "idle, the loop scales burst to minReplicas 2, both in member3 (its room)" wait_until 15 placement_is "member3=2 "
curl -sk -X PUT "$control/sim/v1/namespaces/default/workloads/burst/load" -d '{"cpu":"1"}' >/dev/null
check "under load the scale-up to 4 fills member3 and spills 2 to member2" wait_until 20 placement_is "member3=2 member2=2 "
check "member3 and member2 run them (2 + 2)" wait_until 10 burst_pods_are "2 2"
status_current_is() { test "$(kk get fhpa burst -o jsonpath='{.status.currentReplicas}')" = "$1"; }
check "the loop counts the pods of both groups: currentReplicas 4" wait_until 10 status_current_is 4
curl -sk -X PUT "$control/sim/v1/namespaces/default/workloads/burst/load" -d '{"cpu":"0"}' >/dev/null
check "without load the scale-down to 2 gives member2's replicas back first" wait_until 20 placement_is "member3=2 "
check "member2 runs none of them, member3 keeps 2" wait_until 10 burst_pods_are "2 0"
finish

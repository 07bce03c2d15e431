#!/usr/bin/env bash
# deploy/ as an operator uses it: the base and each overlay render with the
# real `kubectl kustomize`; every rendered object (and deploy/member-hpa-rbac.yaml)
# validates strictly against the Kubernetes API types of python3-kubernetes
# (test/e2e/tools/validate_manifests.py; its own schema for cert-manager's and
# the Prometheus Operator's kinds), and a broken one does not; each rendering
# says what it promises (test/e2e/tools/check_deploy_renderings.py: a hardened
# pod, two replicas, cert-manager's CA in the APIServices, a scrape token, the
# ports of the NetworkPolicy); and the objects are applied for real to the
# simulated control plane, split by the label that names their cluster as
# docs/install.md applies them.
# Usage: deploy_manifests_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2
tools=$src/test/e2e/tools

renderings=(base overlays/high-availability overlays/cert-manager overlays/monitoring overlays/network-policy)
for r in "${renderings[@]}"; do
  file=$E2E_TMP/${r//\//-}.yaml
  if kubectl kustomize "$src/deploy/${r#base}" >"$file" 2>"$E2E_TMP/kustomize.err"; then
    pass "kubectl kustomize deploy/${r#base} renders ($(grep -c '^kind:' "$file") objects)"
  else
    fail "kubectl kustomize deploy/${r#base}: $(cat "$E2E_TMP/kustomize.err")"
  fi
done
base=$E2E_TMP/base.yaml cm=$E2E_TMP/overlays-cert-manager.yaml mon=$E2E_TMP/overlays-monitoring.yaml

# Broken copies, each with what the validation must say of it.
declare -A broken_says=()
broken() {  # broken NAME SED_EXPRESSION FILE EXPECTED
  sed "$2" "$3" >"$E2E_TMP/broken-$1.yaml"
  broken_says[$1]=$4
}
broken misspelt-field 's/readOnlyRootFilesystem:/readOnlyRootFileSystem:/' "$base" 'unknown field "readOnlyRootFileSystem"'
broken field-at-wrong-level 's/^  replicas: 1$/  replica: 1/' "$base" 'unknown field "replica"'
broken wrong-type 's/^  replicas: 1$/  replicas: one/' "$base" 'spec.replicas: expected int'
broken unknown-kind 's/^kind: PodDisruptionBudget$/kind: PodDisruptionBudgets/' "$base" 'not a Kubernetes API type'
broken missing-required-field '/^roleRef:$/,/^  name: /d' "$base" 'Invalid value for `role_ref`'
broken certificate-without-secret 's/^  secretName: fedmetrics-serving-cert$//' "$cm" 'missing required field "secretName"'
broken servicemonitor-unknown-field 's/^    scheme: https$/    schema: https/' "$mon" 'unknown field "schema"'

# One run of the validation over everything (importing the client is slow).
files=("$base" "$E2E_TMP"/overlays-*.yaml "$src/deploy/member-hpa-rbac.yaml")
report=$(/usr/bin/python3 "$tools/validate_manifests.py" "${files[@]}" "$E2E_TMP"/broken-*.yaml 2>&1 || true)
for file in "${files[@]}"; do
  if grep -qxF "$file: 0 error(s)" <<<"$report"; then pass "${file##*/}: every object validates"
  else fail "${file##*/} does not validate:"$'\n'"$(grep -F "error: $file:" <<<"$report")"; fi
done
for name in "${!broken_says[@]}"; do
  file=$E2E_TMP/broken-$name.yaml
  said=$(grep -F "error: $file:" <<<"$report" | grep -F "${broken_says[$name]}" | head -1 || true)
  if grep -qxF "$file: 0 error(s)" <<<"$report"; then fail "broken manifest ($name): not caught"
  elif [ -z "$said" ]; then fail "broken manifest ($name): the report does not say '${broken_says[$name]}'"
  else pass "broken manifest ($name) is caught: ${said#"error: $file: "}"; fi
done

# What each rendering promises.
version=$(sed -n 's/^project(fedmetrics VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
while IFS= read -r line; do
  case $line in "ok   - "*) pass "${line#ok   - }" ;; *) fail "${line#FAIL - }" ;; esac
done < <(/usr/bin/python3 "$tools/check_deploy_renderings.py" "$base" "$E2E_TMP"/overlays-{high-availability,cert-manager,monitoring,network-policy}.yaml "v$version" 2>&1)

# Applied for real to the simulated control plane (it keeps what it is given:
# its dry run is not one). The kinds it does not serve are left out, and
# named: the NetworkPolicy, cert-manager's Issuer and Certificate, the
# ServiceMonitor.
start_sim "$src/test/e2e/karmada.world.yaml"
quiet() { local out; out=$("$@" 2>&1) || { echo "$out" | sed 's/^/    /'; return 1; }; }
# kubectl api-resources: NAME [SHORTNAMES] APIVERSION NAMESPACED KIND.
served=$(kk api-resources --no-headers | awk '{print $(NF-2) " " $NF}')
for r in "${renderings[@]}"; do
  /usr/bin/python3 - "$E2E_TMP/${r//\//-}.yaml" "$E2E_TMP/apply.yaml" "$served" <<'EOF' | sed "s|^|    deploy/${r#base}: |"
import sys, yaml
served = set(sys.argv[3].splitlines())
objs = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
kept = [o for o in objs if f"{o['apiVersion']} {o['kind']}" in served]
for o in objs:
    if o not in kept:
        print(f"left out of the apply: {o['apiVersion']} {o['kind']} {o['metadata']['name']}")
yaml.safe_dump_all(kept, open(sys.argv[2], "w"))
EOF
  if [ "$r" = base ]; then
    # In docs/install.md's order: fedmetrics' identity on karmada-apiserver,
    # the host cluster's objects, then the APIServices.
    applied() { kk apply -f "$E2E_TMP/apply.yaml" -l "$1" -o name 2>&1 | sort | xargs; }
    check "step 1: the karmada-apiserver objects but the APIServices" \
      test "$(applied 'fedmetrics.io/apply-to-karmada,!fedmetrics.io/apiservice')" = "clusterrole.rbac.authorization.k8s.io/fedmetrics clusterrole.rbac.authorization.k8s.io/system:fedmetrics-aggregated-metrics-reader clusterrolebinding.rbac.authorization.k8s.io/fedmetrics clusterrolebinding.rbac.authorization.k8s.io/fedmetrics:system:auth-delegator namespace/fedmetrics-system rolebinding.rbac.authorization.k8s.io/fedmetrics-auth-reader service/fedmetrics serviceaccount/fedmetrics"
    check "step 2: the host cluster's objects: the Namespace, the Deployment, its Service and PDB" \
      test "$(applied fedmetrics.io/apply-to-host)" = "deployment.apps/fedmetrics namespace/fedmetrics-system poddisruptionbudget.policy/fedmetrics service/fedmetrics-host"
    check "step 3: the four APIServices" \
      test "$(applied fedmetrics.io/apiservice | wc -w) $(kk get apiservices --no-headers | grep -c 'fedmetrics-system/fedmetrics ')" = "4 4"
  else
    check "kubectl apply deploy/${r#base} to the simulated control plane" quiet kk apply -f "$E2E_TMP/apply.yaml"
  fi
  if [ "$r" = overlays/high-availability ]; then
    check "the simulated control plane holds the high-availability Deployment and PDB" \
      test "$(kk get deploy fedmetrics -n fedmetrics-system -o jsonpath='{.spec.replicas}') $(kk get pdb fedmetrics -n fedmetrics-system -o jsonpath='{.spec.minAvailable}')" = "2 1"
  fi
done
check "the APIServices registered there name fedmetrics-system/fedmetrics" \
  test "$(kk get apiservices --no-headers | grep -c 'fedmetrics-system/fedmetrics ')" = 4
check "the aggregated reader ClusterRole is there" quiet kk get clusterrole system:fedmetrics-aggregated-metrics-reader
finish

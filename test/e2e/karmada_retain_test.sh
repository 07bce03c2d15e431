#!/usr/bin/env bash
# Karmada's retain semantics in the simulated control plane: a Deployment
# template labelled resourcetemplate.karmada.io/retain-replicas: "true" leaves
# each member's replica count to the member (here member1's own HPA scales
# it), and the template's spec.replicas follows the sum of the members'
# (Karmada's replicas syncer); a scale of the template no longer divides, and
# its answer says what the template keeps.
# Without the label, Karmada's division applies again.
# Usage: karmada_retain_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/test/e2e/karmada.world.yaml" --member-hpa-sync-period 1s
placement() { json_get "$(curl -sk "$control/sim/v1/world")" "d['workloads'][0]['placement']"; }
placement_is() { [ "$(placement)" = "$1" ]; }
template() { kk get deployment nginx -o jsonpath='{.spec.replicas}'; }
template_is() { [ "$(template)" = "$1" ]; }
binding() { kk get resourcebinding nginx-deployment -o jsonpath='{range .spec.clusters[*]}{.name}={.replicas} {end}'; }

check "without the label, a template scale divides" kk scale deployment nginx --replicas=4
check "placement 2 and 2" wait_until 5 placement_is "{'member1': 2, 'member2': 2}"
check "label the template retain-replicas" kk label deployment nginx resourcetemplate.karmada.io/retain-replicas=true
check "member1 hot, member2 idle" \
  test "$(sim_put /sim/v1/namespaces/default/workloads/nginx/load '{"cpu":"0"}')$(sim_put /sim/v1/namespaces/default/workloads/nginx/members/member1/load '{"cpu":"200m"}')" = 200200
member_hpa_yaml 1 5 >"$E2E_TMP/hpa.yaml"
check "an HPA on member1" km member1 apply -f "$E2E_TMP/hpa.yaml"
# 2 pods at 100% of 25m against 50%: 4; then 4 at 100%: 8, limited to 5.
check "member1's HPA scales member1 to 5; member2 keeps 2" wait_until 60 placement_is "{'member1': 5, 'member2': 2}"
check "the template's spec.replicas follows the members' sum (7)" wait_until 5 template_is 7
check "the ResourceBinding says where they are" test "$(binding)" = "member1=5 member2=2 "
check "a template scale with the label does not divide" kk scale deployment nginx --replicas=2
sleep 1
check "the members keep theirs (5 and 2)" placement_is "{'member1': 5, 'member2': 2}"
check "and the template is back at their sum (7)" template_is 7
answered=$(kk patch deployment nginx --subresource=scale --type=merge -p '{"spec":{"replicas":3}}' -o jsonpath='{.spec.replicas}')
check "a scale write is answered with what the template keeps (7), not the 3 asked ($answered)" test "$answered" = 7
check "member1 still runs 5 pods" member_pods_are member1 5
check "remove the label" kk label deployment nginx resourcetemplate.karmada.io/retain-replicas-
check "delete member1's HPA" km member1 delete hpa nginx
check "without the label, a template scale divides again" kk scale deployment nginx --replicas=6
check "placement 3 and 3" wait_until 5 placement_is "{'member1': 3, 'member2': 3}"
check "the template says 6" template_is 6
finish

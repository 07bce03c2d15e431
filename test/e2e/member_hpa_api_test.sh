#!/usr/bin/env bash
# The autoscaling/v2 HorizontalPodAutoscaler API of a simulated member, with
# the real kubectl through the member's context in members.kubeconfig:
# discovery (hpa), apply, get (table and JSON), merge patch, the status
# subresource, watch, 422 Invalid as kube-apiserver, delete; each member
# keeps its own HPAs.
# Usage: member_hpa_api_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

# The members' own HPA controllers resync once an hour: at their default 15 s
# one could rewrite the status written by hand below before it is read back.
start_sim "$src/test/e2e/karmada.world.yaml" --member-hpa-sync-period 1h

member_hpa_yaml 1 4 >"$E2E_TMP/hpa.yaml"

check "discovery lists horizontalpodautoscalers (shortName hpa) in autoscaling/v2" \
  bash -c "kubectl --kubeconfig '$E2E_TMP/world/members.kubeconfig' --context member1 api-resources --api-group=autoscaling --no-headers 2>/dev/null | grep -q '^horizontalpodautoscalers *hpa *autoscaling/v2 *true *HorizontalPodAutoscaler'"
check "no HPA on member1 at first" test -z "$(km member1 get hpa --no-headers 2>/dev/null)"
check "kubectl apply -f hpa.yaml on member1" km member1 apply -f "$E2E_TMP/hpa.yaml"
row=$(km member1 get hpa nginx --no-headers)
check "kubectl get hpa shows reference, target and bounds ($row)" \
  bash -c "[[ '$row' =~ ^nginx\ +Deployment/nginx\ +cpu:\ \<unknown\>/50%\ +1\ +4\ +0 ]]"
check "member2 has no HPA (each member its own)" test -z "$(km member2 get hpa --no-headers 2>/dev/null)"
check "kubectl apply again is unchanged" bash -c "kubectl --kubeconfig '$E2E_TMP/world/members.kubeconfig' --context member1 apply -f '$E2E_TMP/hpa.yaml' | grep -q unchanged"

# A watch from now, in the background, sees the changes below; -v=6 logs
# its requests, so the changes are made once the watch is open.
spawn "$E2E_TMP/watch.out" kubectl -v=6 --kubeconfig "$E2E_TMP/world/members.kubeconfig" --context member1 \
  get hpa nginx --watch-only -o json
watch_pid=$spawned
check "the watch is open (kubectl -v=6 logged its GET ...watch=true: 200)" wait_for_log "$E2E_TMP/watch.out" 'watch=true.* 200 OK' 20
check "merge patch of maxReplicas" km member1 patch hpa nginx --type=merge -p '{"spec":{"maxReplicas":6}}'
check "the patch is stored" test "$(km member1 get hpa nginx -o jsonpath='{.spec.maxReplicas}')" = 6
check "status subresource: merge patch of status" \
  km member1 patch hpa nginx --subresource=status --type=merge -p '{"status":{"currentReplicas":2,"desiredReplicas":3}}'
check "the status is stored and the spec kept" \
  test "$(km member1 get hpa nginx -o jsonpath='{.status.desiredReplicas}/{.spec.maxReplicas}')" = 3/6
check "a spec write does not change status" \
  bash -c "kubectl --kubeconfig '$E2E_TMP/world/members.kubeconfig' --context member1 patch hpa nginx --type=merge -p '{\"status\":{\"desiredReplicas\":9}}' >/dev/null && test \"\$(kubectl --kubeconfig '$E2E_TMP/world/members.kubeconfig' --context member1 get hpa nginx -o jsonpath='{.status.desiredReplicas}')\" = 3"
check "the watch saw the changes" wait_until 5 bash -c "grep -c '\"maxReplicas\": 6' '$E2E_TMP/watch.out' | grep -q '[1-9]'"
stop "$watch_pid" KILL  # kubectl ends a watch with status 1 on SIGTERM

# Validation as kube-apiserver: 422 Invalid naming the fields.
invalid=$(km member1 patch hpa nginx --type=merge -p '{"spec":{"minReplicas":0}}' 2>&1 || true)
check "minReplicas 0 is refused: $invalid" \
  bash -c "grep -q 'is invalid: spec.minReplicas: Invalid value: 0: must be greater than or equal to 1' <<<'$invalid'"
sed 's/maxReplicas: 4/maxReplicas: 0/; s/name: nginx$/name: broken/' "$E2E_TMP/hpa.yaml" >"$E2E_TMP/bad.yaml"
bad=$(km member1 apply -f "$E2E_TMP/bad.yaml" 2>&1 || true)
check "maxReplicas 0 is refused: $bad" \
  bash -c "grep -q 'HorizontalPodAutoscaler \"broken\" is invalid: spec.maxReplicas: Invalid value: 0: must be greater than 0' <<<'$bad'"
check "nothing was stored for it" test -z "$(km member1 get hpa broken --ignore-not-found --no-headers)"
token=$(grep -m1 'token:' "$E2E_TMP/world/members.kubeconfig" | awk '{print $2}')
server=$(km member1 config view --minify -o jsonpath='{.clusters[0].cluster.server}')
code=$(curl -sk -o "$E2E_TMP/invalid.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $token" \
  -H 'Content-Type: application/json' "$server/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers" \
  -d '{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"x"},"spec":{"maxReplicas":2}}')
check "no scaleTargetRef: 422 with reason Invalid and causes" \
  test "$code/$(json_get "$(cat "$E2E_TMP/invalid.json")" "d['reason'] + ':' + ','.join(c['field'] for c in d['details']['causes'])")" \
  = "422/Invalid:spec.scaleTargetRef.kind,spec.scaleTargetRef.name"
code=$(curl -sk -o /dev/null -w '%{http_code}' "$server/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers")
check "no token: 401" test "$code" = 401
check "kubectl delete hpa" km member1 delete hpa nginx
check "gone after delete" test -z "$(km member1 get hpa --no-headers 2>/dev/null)"
finish

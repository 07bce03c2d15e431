# Helpers of the distributed-mode e2e tests (source after lib.sh and
# start_sim): examples/federatedhpa/nginx-distributed.yaml on the two members
# of test/e2e/karmada.world.yaml, minReplicas 2, maxReplicas 6.

# distributed_world: the simulated world with member HPA controllers syncing
# every second and no load anywhere, fedmetrics started on it with the loop
# every 2s, no rebalance window and an orphan sweep every 4s ($serve_args
# kept for a restart: start_serve LOG "${serve_args[@]}"), and the example
# FederatedHPA applied.
distributed_world() {
  start_sim "$src/test/e2e/karmada.world.yaml" --member-hpa-sync-period 1s
  serve_args=(--member-kubeconfig "$E2E_TMP/world/members.kubeconfig" --enable-autoscaler
              --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --leader-elect=false
              --horizontal-pod-autoscaler-sync-period 2s --distributed-rebalance-window 0s
              --distributed-orphan-sweep-period 4s)
  check "no load anywhere" test "$(sim_put /sim/v1/namespaces/default/workloads/nginx/load '{"cpu":"0"}')" = 200
  start_serve "$E2E_TMP/serve.log" "${serve_args[@]}"
  check "kubectl apply examples/federatedhpa/nginx-distributed.yaml (min 2, max 6)" \
    kk apply -f "$src/examples/federatedhpa/nginx-distributed.yaml"
}

# share MEMBER: the member HPA's "min/max" (empty when it has none).
share() { km "$1" get hpa nginx -o jsonpath='{.spec.minReplicas}/{.spec.maxReplicas}' 2>/dev/null; }

# shares_are MIN1/MAX1 MIN2/MAX2: the invariants checked, then the shares compared.
shares_are() { invariants; [ "$(share member1)" = "$1" ] && [ "$(share member2)" = "$2" ]; }

# invariants: the invariants of docs/distributed-mode.md ("after every
# pass that distributes"), at every observation of both member HPAs: sum of max = 6,
# 1 <= min <= max each, sum of min = max(2, n) = 2. A move of maxReplicas is
# two writes to two clusters, so an observation between them (or between our
# two reads) sees the move half made: a broken observation is read again a
# second later, when that reconcile has ended, and only a violation that is
# still there is written to $E2E_TMP/violations for invariants_held. Each
# observation is a line of $E2E_TMP/observations (a file, so that one made in
# a subshell counts too).
broken() {  # broken "MIN1/MAX1" "MIN2/MAX2"
  local min1=${1%/*} max1=${1#*/} min2=${2%/*} max2=${2#*/}
  [ $((max1 + max2)) -ne 6 ] || [ "$min1" -lt 1 ] || [ "$min2" -lt 1 ] || [ "$min1" -gt "$max1" ] ||
    [ "$min2" -gt "$max2" ] || [ $((min1 + min2)) -ne 2 ]
}
invariants() {
  local a b
  a=$(share member1) b=$(share member2)
  [ -n "$a" ] && [ -n "$b" ] || return 0  # not created yet (or deleted at the end)
  echo "member1 $a, member2 $b" >>"$E2E_TMP/observations"
  broken "$a" "$b" || return 0
  sleep 1
  local a2 b2
  a2=$(share member1) b2=$(share member2)
  [ -n "$a2" ] && [ -n "$b2" ] || return 0
  if broken "$a2" "$b2"; then
    echo "invariants broken: member1 $a, member2 $b; a second later member1 $a2, member2 $b2" >>"$E2E_TMP/violations"
  else
    echo "mid-reconcile: member1 $a, member2 $b; a second later member1 $a2, member2 $b2" >>"$E2E_TMP/transient"
  fi
}

# invariants_held: the check at the end of a test; none observed is a failure.
invariants_held() {
  invariants
  local observations
  observations=$(cat "$E2E_TMP/observations" 2>/dev/null | wc -l || true)
  check "the invariants held at every observation ($observations)" \
    test "$observations" -gt 0 -a ! -s "$E2E_TMP/violations"
  cat "$E2E_TMP/violations" "$E2E_TMP/transient" 2>/dev/null || true
}

# fhpa JSONPATH: a field of the FederatedHPA nginx on the control plane.
fhpa() { kk get fhpa nginx -o jsonpath="$1"; }

# fhpa_is JSONPATH VALUE: succeeds when fhpa JSONPATH is VALUE (for wait_until).
fhpa_is() { [ "$(fhpa "$1")" = "$2" ]; }

# annotation: the distribution annotation (the shares) on the FederatedHPA.
annotation() { fhpa '{.metadata.annotations.autoscaling\.fedmetrics\.io/distribution}'; }

# condition TYPE: the FederatedHPA's condition TYPE as "status/reason".
condition() { fhpa "{.status.conditions[?(@.type==\"$1\")].status}/{.status.conditions[?(@.type==\"$1\")].reason}"; }

# events FILE: the FederatedHPAs' Events in namespace default as "type reason: message" lines.
events() {
  kk get events -n default \
    -o jsonpath='{range .items[*]}{.involvedObject.kind} {.type} {.reason}: {.message}{"\n"}{end}' 2>&1 |
    sed -n 's/^FederatedHPA //p' >"$1" || true
}

#!/usr/bin/env bash
# Two `fedmetrics serve --enable-autoscaler` replicas against one control
# plane: only the holder of the coordination.k8s.io Lease runs the loop; when
# it stops (SIGTERM) it releases the Lease and the other takes over at once;
# when that one dies without releasing (SIGKILL), a third replica takes over
# once the Lease has expired.
# Usage: leader_election_test.sh FEDMETRICS_BINARY SOURCE_DIR
source "$(dirname "$0")/lib.sh"
bin=$1
src=$2

start_sim "$src/examples/worlds/nginx.yaml"
WAIT_UNTIL_INTERVAL=0.2  # the handovers are timed to the second

replica() { start_replica "$1" --horizontal-pod-autoscaler-sync-period 1s; }

replica a
replica b
a=$(identity_of a); b=$(identity_of b)
check "each replica has its own identity" test -n "$a" -a -n "$b" -a "$a" != "$b"
check "one of them holds the Lease" wait_until 10 bash -c "h=\$(kubectl --kubeconfig '$E2E_TMP/world/karmada.kubeconfig' get lease -n kube-system fedmetrics-autoscaler -o jsonpath='{.spec.holderIdentity}'); [ \"\$h\" = '$a' ] || [ \"\$h\" = '$b' ]"
if [ "$(holder)" = "$a" ]; then leader=a; follower=b; else leader=b; follower=a; fi
leader_id=$(identity_of $leader); follower_id=$(identity_of $follower)
sleep 1
check "the follower has not acquired it" \
  test "$(grep -c 'acquired the lease' "$E2E_TMP/$follower.log")" = 0

eval "signal \$pid_$leader TERM"
check "SIGTERM releases the Lease and the follower takes over" wait_until 15 holder_is "$follower_id"
check "the follower logs that it acquired it" wait_for_log "$E2E_TMP/$follower.log" "acquired the lease" 10
# "At once" by the replicas' own clocks (their log lines), not by how fast
# kubectl can poll: without the release the follower would wait for the Lease
# to expire, 3 s after the last renewal (2.75 s at least after the leader
# stopped, which renews every 250 ms).
log_time() { date -d "$(grep -m1 "$2" "$1" | sed -n 's/^\[\([^]]*\)\].*/\1/p')" +%s.%N; }
handover=$(python3 -c "print(round($(log_time "$E2E_TMP/$follower.log" 'acquired the lease') - $(log_time "$E2E_TMP/$leader.log" 'stopped leading'), 2))")
check "the follower took over at once, well before the Lease would expire (${handover} s after the leader stopped)" \
  python3 -c "import sys; sys.exit(0 if 0 <= $handover < 2.5 else 1)"

replica c
c=$(identity_of c)
eval "stop \$pid_$follower KILL"
check "after SIGKILL the Lease stays held until it expires" holder_is "$follower_id"
check "then the third replica takes it (lease duration 3 s)" wait_until 15 holder_is "$c"
transitions=$(kk get lease -n kube-system fedmetrics-autoscaler -o jsonpath='{.spec.leaseTransitions}')
check "leaseTransitions counts the two takeovers" test "$transitions" = 2
finish

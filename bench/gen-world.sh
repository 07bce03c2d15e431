#!/usr/bin/env bash
# Writes a world file for `fedmetrics sim` of any size, and optionally one
# FederatedHPA per Deployment: the worlds the benchmarks and their smoke tests
# run on, so that no bench world is written by hand.
#
# Usage: bash bench/gen-world.sh [options] > world.yaml
#   --members N           member clusters member1..memberN (default 3)
#   --nodes N             nodes per member (default 2)
#   --deployments N       Deployments w1..wN (default 1)
#   --spread K|all|A-B    members each Deployment is propagated to, with equal
#                         weights: Deployment i goes to the K members starting at
#                         member ((i-1) mod N)+1, so that they are evenly used
#                         (default 2, at most --members); A-B: Deployment i to
#                         A + ((i-1) mod (B-A+1)) of them (2-5: 2, 3, 4, 5, 2, ...)
#   --replicas N          replicas of each Deployment (default 2)
#   --pods-per-member N   instead of --replicas: each member runs about N pods
#                         (replicas = N * members / Deployments, at most
#                         10,000, the world file's limit per Deployment)
#   --namespace NS        the Deployments' namespace (default "default")
#   --fhpa-out FILE       also write one FederatedHPA per Deployment to FILE
#                         (target: 50 % cpu utilization, 1..10 replicas)
#   --fhpa N              only the first N Deployments get one (default all)
#   --fhpa-mode MODE      centralized (default) or distributed (the
#                         autoscaling.fedmetrics.io/mode annotation)
# Each pod requests 100m cpu and 64Mi and is offered 50m of load (plus the
# simulator's 1m baseline: 51 % of the request), so that a FederatedHPA at
# 50 % sits inside the tolerance and nothing rescales.
set -euo pipefail

members=3 nodes=2 deployments=1 spread=2 replicas=2 per_member="" namespace=default
fhpa_out="" fhpa_count="" fhpa_mode=centralized
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --members) members=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --deployments) deployments=$2; shift 2 ;;
    --spread) spread=$2; shift 2 ;;
    --replicas) replicas=$2; shift 2 ;;
    --pods-per-member) per_member=$2; shift 2 ;;
    --namespace) namespace=$2; shift 2 ;;
    --fhpa-out) fhpa_out=$2; shift 2 ;;
    --fhpa) fhpa_count=$2; shift 2 ;;
    --fhpa-mode) fhpa_mode=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "gen-world: unknown option '$1'" >&2; usage ;;
  esac
done
[ "$spread" = all ] && spread=$members
spread_max=""
if [[ $spread =~ ^([0-9]+)-([0-9]+)$ ]]; then
  spread=${BASH_REMATCH[1]} spread_max=${BASH_REMATCH[2]}
  [ "$spread_max" -ge "$spread" ] && [ "$spread_max" -le "$members" ] ||
    { echo "gen-world: --spread A-B needs A <= B <= --members ($members)" >&2; exit 2; }
fi
for v in members nodes deployments spread replicas ${per_member:+per_member} ${fhpa_count:+fhpa_count}; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "gen-world: --${v//_/-} must be a number, not '${!v}'" >&2; exit 2; }
done
[ "$members" -ge 1 ] && [ "$deployments" -ge 1 ] && [ "$nodes" -ge 1 ] ||
  { echo "gen-world: --members, --nodes and --deployments must be at least 1" >&2; exit 2; }
[ "$spread" -ge 1 ] && [ "$spread" -le "$members" ] ||
  { echo "gen-world: --spread must be between 1 and --members ($members), not $spread" >&2; exit 2; }
case "$fhpa_mode" in centralized|distributed) ;; *) echo "gen-world: --fhpa-mode must be centralized or distributed" >&2; exit 2 ;; esac
if [ -n "$per_member" ]; then
  # Deployments spread over K members of N: each member holds deployments*K/N of them.
  replicas=$(( (per_member * members + deployments - 1) / deployments ))
fi
[ "$replicas" -le 10000 ] || { echo "gen-world: $replicas replicas per Deployment is over the world file's 10,000; ask for more --deployments" >&2; exit 2; }
fhpa_count=${fhpa_count:-$deployments}

# awk writes the lines: a bash loop takes seconds at 10,000 Deployments.
awk -v members="$members" -v nodes="$nodes" -v deployments="$deployments" -v spread="$spread" \
    -v spread_max="${spread_max:-$spread}" -v replicas="$replicas" -v ns="$namespace" 'BEGIN {
  print "members:"
  for (i = 1; i <= members; i++) printf "  - {name: member%d, nodes: %d}\n", i, nodes
  print "namespaces: [" ns "]"
  print "workloads:"
  for (w = 1; w <= deployments; w++) {
    clusters = ""; weights = ""
    k = spread + (w - 1) % (spread_max - spread + 1)
    for (j = 0; j < k; j++) {
      m = (w - 1 + j) % members + 1
      clusters = clusters (j ? ", " : "") "member" m
      weights = weights (j ? ", " : "") "member" m ": 1"
    }
    printf "  - name: w%d\n    namespace: %s\n    replicas: %d\n    labels: {app: w%d}\n", w, ns, replicas, w
    print "    containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]"
    printf "    propagation: {clusters: [%s], weights: {%s}}\n", clusters, weights
    printf "    load: {cpu: %dm}\n", replicas * 50
  }
}'

if [ -n "$fhpa_out" ]; then
  awk -v n="$fhpa_count" -v ns="$namespace" -v mode="$fhpa_mode" 'BEGIN {
    annotations = mode == "distributed" ? ", annotations: {autoscaling.fedmetrics.io/mode: distributed}" : ""
    for (w = 1; w <= n; w++) {
      print "---\napiVersion: autoscaling.karmada.io/v1alpha1\nkind: FederatedHPA"
      printf "metadata: {name: w%d, namespace: %s%s}\nspec:\n", w, ns, annotations
      printf "  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: w%d}\n", w
      print "  minReplicas: 1\n  maxReplicas: 10\n  metrics:\n  - type: Resource"
      print "    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}"
    }
  }' >"$fhpa_out"
fi

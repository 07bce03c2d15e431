#!/usr/bin/python3
"""What each rendering of deploy/ promises (test/e2e/deploy_manifests_test.sh).
Usage: check_deploy_renderings.py BASE HA CERT_MANAGER MONITORING NETWORK_POLICY VERSION
(the files `kubectl kustomize` wrote for the base and each overlay, and the
project's version "vX.Y.Z"). Prints one "ok   - ..." or "FAIL - ..." line per check.
"""
import re
import sys

import yaml

files = dict(zip(("base", "ha", "cm", "mon", "np"), sys.argv[1:6]))
version = sys.argv[6]
objs = {k: [o for o in yaml.safe_load_all(open(f)) if o] for k, f in files.items()}
text = {k: open(f).read() for k, f in files.items()}


def one(r, kind, name):
    found = [o for o in objs[r] if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"{len(found)} {kind} named {name}"
    return found[0]


def pod(r):
    return one(r, "Deployment", "fedmetrics")["spec"]["template"]["spec"]


def container(r):
    return pod(r)["containers"][0]


def check(what, test):
    try:
        ok = test()
    except Exception as e:  # a missing field fails the check, naming it
        ok, what = False, f"{what} ({type(e).__name__}: {e})"
    print(("ok   - " if ok else "FAIL - ") + what)


check("the base runs one replica with leader election on",
      lambda: one("base", "Deployment", "fedmetrics")["spec"]["replicas"] == 1
      and "--leader-elect=true" in container("base")["args"])
check("the container: read-only root, non-root, no privilege escalation, every capability dropped",
      lambda: (lambda c: c["readOnlyRootFilesystem"] is True and c["runAsNonRoot"] is True
               and c["allowPrivilegeEscalation"] is False and c["capabilities"] == {"drop": ["ALL"]})(
                   container("base")["securityContext"]))
check("seccomp RuntimeDefault, priorityClassName system-cluster-critical, no ServiceAccount token",
      lambda: pod("base")["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
      and pod("base")["priorityClassName"] == "system-cluster-critical"
      and pod("base")["automountServiceAccountToken"] is False)
check("probes on /livez and /readyz, CPU and memory requests, a memory limit",
      lambda: container("base")["livenessProbe"]["httpGet"]["path"] == "/livez"
      and container("base")["readinessProbe"]["httpGet"]["path"] == "/readyz"
      and set(container("base")["resources"]["requests"]) == {"cpu", "memory"}
      and "memory" in container("base")["resources"]["limits"])
check("the aggregated metrics reader joins view, edit and admin",
      lambda: all(one("base", "ClusterRole", "system:fedmetrics-aggregated-metrics-reader")["metadata"]["labels"]
                  .get("rbac.authorization.k8s.io/aggregate-to-" + r) == "true" for r in ("view", "edit", "admin")))
check("the four APIServices name the Service fedmetrics, an ExternalName",
      lambda: sorted(o["metadata"]["name"] for o in objs["base"]
                     if o["kind"] == "APIService" and o["spec"]["service"]["name"] == "fedmetrics")
      == ["v1beta1.custom.metrics.k8s.io", "v1beta1.external.metrics.k8s.io", "v1beta1.metrics.k8s.io",
          "v1beta2.custom.metrics.k8s.io"]
      and one("base", "Service", "fedmetrics")["spec"]["type"] == "ExternalName")
check("every object names the cluster it is applied to",
      lambda: all(any(k.startswith("fedmetrics.io/apply-to-") for k in o["metadata"].get("labels", {}))
                  for r in objs for o in objs[r]))
check(f"the image is tagged with the project's version ({version})",
      lambda: container("base")["image"] == f"fedmetrics:{version}")
check("no placeholder to edit in the base nor in the cert-manager overlay",
      lambda: not re.search(r"placeholder|replace[-_ ]?me|change[-_ ]?me|<[a-z_-]+>|example\.(com|org)",
                            text["base"] + text["cm"], re.I))
check("high availability: 2 replicas, spread over nodes and zones, PDB minAvailable 1",
      lambda: one("ha", "Deployment", "fedmetrics")["spec"]["replicas"] == 2
      and pod("ha")["affinity"]["podAntiAffinity"]
      and {t["topologyKey"] for t in pod("ha")["topologySpreadConstraints"]}
      == {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}
      and one("ha", "PodDisruptionBudget", "fedmetrics")["spec"].get("minAvailable") == 1
      and "maxUnavailable" not in one("ha", "PodDisruptionBudget", "fedmetrics")["spec"])
check("high availability: the autoscaler runs in the Lease holder only",
      lambda: {"--leader-elect=true", "--enable-autoscaler"} <= set(container("ha")["args"]))
check("cert-manager: an Issuer and a Certificate for the APIServices' Service",
      lambda: one("cm", "Certificate", "fedmetrics-serving-cert")["spec"]["issuerRef"]["name"]
      == one("cm", "Issuer", "fedmetrics-selfsigned")["metadata"]["name"]
      and "fedmetrics.fedmetrics-system.svc" in one("cm", "Certificate", "fedmetrics-serving-cert")["spec"]["dnsNames"])
check("cert-manager: every APIService has the CA injected, and is verified",
      lambda: all(o["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]
                  == "fedmetrics-system/fedmetrics-serving-cert" and "insecureSkipTLSVerify" not in o["spec"]
                  for o in objs["cm"] if o["kind"] == "APIService"))
check("cert-manager: fedmetrics serves the Certificate's Secret",
      lambda: "--tls-cert-file=/etc/fedmetrics/serving/tls.crt" in container("cm")["args"]
      and {"name": "serving", "secret": {"secretName": "fedmetrics-serving-cert"}} in pod("cm")["volumes"])
check("monitoring: the ServiceMonitor scrapes /metrics over HTTPS with the scrape token",
      lambda: (lambda e: e["path"] == "/metrics" and e["scheme"] == "https"
               and e["authorization"]["credentials"] == {"name": "fedmetrics-scrape-token", "key": "token"})(
                   one("mon", "ServiceMonitor", "fedmetrics")["spec"]["endpoints"][0]))
check("monitoring: the scraper may get /metrics and nothing else",
      lambda: one("mon", "ClusterRole", "fedmetrics:metrics-scraper")["rules"]
      == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}])
check("network policy: in on the secure port only; out to DNS and the API servers",
      lambda: (lambda s: s["ingress"] == [{"ports": [{"port": 6443, "protocol": "TCP"}]}]
               and {p["port"] for r in s["egress"] for p in r["ports"]} == {53, 443, 5443, 6443})(
                   one("np", "NetworkPolicy", "fedmetrics")["spec"]))

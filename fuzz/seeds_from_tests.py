#!/usr/bin/env python3
"""Writes the seed corpora fuzz/corpus/<target>/ from the unit tests' case
tables (string literals of the named test files) and the example files, so
that every target starts from the inputs the tests already know. Run once
after adding test cases; the corpora are kept in the repository. Seeds are
de-duplicated, at most 4 KiB each (scenarios 20 KiB) and at most 60 a target. Arguments,
if any, name the only targets whose corpora are written."""
import codecs, gzip, hashlib, pathlib, re

root = pathlib.Path(__file__).resolve().parent.parent
out = root / "fuzz" / "corpus"

def text(path):
    return (root / path).read_text()

def raw_strings(path):  # C++ raw literals R"(...)"
    return re.findall(r'R"\((.*?)\)"', text(path), re.S)

def unescape(s):
    return codecs.decode(s.encode("latin-1"), "unicode_escape").encode("latin-1")

def quoted_after(path, pattern):  # the "..." literal that follows `pattern`
    return [unescape(m) for m in re.findall(pattern + r'"((?:[^"\\]|\\.)*)"', text(path))]

seeds = {}
def add(target, items):
    for item in items:
        data = item.encode() if isinstance(item, str) else item
        if len(data) <= (20480 if target == "scenario" else 4096):
            seeds.setdefault(target, {})[hashlib.sha1(data).hexdigest()[:16]] = data

add("quantity", quoted_after("test/k8s/quantity_test.cpp", r'parse\('))
add("quantity", quoted_after("test/k8s/quantity_test.cpp", r'\{'))
add("label_selector", quoted_after("test/k8s/label_selector_test.cpp", r'\{'))
add("label_selector", quoted_after("test/k8s/label_selector_test.cpp", r'parse\('))
add("field_selector", quoted_after("test/k8s/field_selector_test.cpp", r'\{'))
add("field_selector", quoted_after("test/k8s/field_selector_test.cpp", r'parse(?:_for)?\('))
methods = {"GET": 0, "HEAD": 1, "POST": 2, "PUT": 3, "PATCH": 4, "DELETE": 5, "OPTIONS": 6}
for method, target in re.findall(r'parse_api_request\("([A-Z]+)",\s*"((?:[^"\\]|\\.)*)"',
                                 text("test/server/api_request_test.cpp")):
    add("api_request", [bytes([methods.get(method, 0)]) + unescape(target)])
add("api_request", [b"\0" + t for t in quoted_after("test/k8s/url_test.cpp", r'') if t.startswith(b"/")])
for target in ["/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dweb",
               "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/http_requests?metricLabelSelector=verb%3DGET",
               "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_length?labelSelector=queue+in+(a,b)",
               "/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=metadata.name%3Dn1"]:
    add("api_request", [b"\0" + target.encode()])
heads = [
    "GET /apis/metrics.k8s.io/v1beta1/pods HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer t\r\n\r\n",
    "POST /apis HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
    "POST /apis HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "GET / HTTP/1.0\r\n\r\n",
    "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
    "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET /readyz?verbose HTTP/1.1\r\nHost: a\r\n\r\n",
    "GET apis HTTP/1.1\r\nHost: a\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "GET / HTTP/2.0\r\nHost: a\r\n\r\n",
    "GET / HTTP/1.1\nHost: a\n\n",
]
add("http_head", [b"\x10" + h.encode() for h in heads] + [b"\x81" + heads[0].encode()])
json_tests = {
    "json_subset": ["test/k8s/json_subset_test.cpp", "test/k8s/metrics_decode_fast_test.cpp"],
    "pod_metrics": ["test/k8s/metrics_decode_fast_test.cpp", "test/k8s/metrics_types_test.cpp"],
    "node_metrics": ["test/k8s/metrics_types_test.cpp"],
    "custom_metrics": ["test/k8s/metrics_types_test.cpp"],
    "external_metrics": ["test/k8s/metrics_types_test.cpp"],
    "discovery": ["test/k8s/discovery_test.cpp"],
    "karmada_cluster": ["test/clusterclient/karmada_cluster_source_test.cpp"],
}
for target, files in json_tests.items():
    for f in files:
        literals = raw_strings(f)
        if target in ("node_metrics", "custom_metrics", "external_metrics"):
            kind = {"node_metrics": "NodeMetrics", "custom_metrics": "MetricValue",
                    "external_metrics": "ExternalMetric"}[target]
            literals = [l for l in literals if kind in l] or literals
        add(target, literals)
add("json_subset", quoted_after("test/k8s/json_subset_test.cpp", r'(?<=[{,]\s)'))
add("kubeconfig", raw_strings("test/clusterclient/kubeconfig_test.cpp"))
add("cron_schedule", [s for s in quoted_after("test/cron/schedule_test.cpp", r'\{')
                       if not re.match(rb"\d{4}-\d\d-\d\dT", s)])  # schedules, not the expected times
# Accept headers: the first string of each negotiation case, and the clients' own.
add("accept", [a for a in quoted_after("test/server/content_negotiation_test.cpp", r'\{') if a] +
    [b"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
     b"application/vnd.kubernetes.protobuf, */*", b"application/json;q=0.9, application/yaml;q=0"])
add("scenario", [p.read_bytes() for p in sorted((root / "examples/scenarios").glob("*.json"))])
samples = [b"", b"hello", b'{"kind":"PodMetricsList","items":[]}', bytes(range(256))]
add("gzip", [gzip.compress(s, mtime=0) for s in samples] + [gzip.compress(b"a") + gzip.compress(b"b")] +
    [gzip.compress(b"x" * 5000, mtime=0)[:-3], b"\x1f\x8b\x08\x00", b"not gzip"])

import sys
only = set(sys.argv[1:])  # seeds_from_tests.py [TARGET...]: only these corpora
for target, items in seeds.items():
    if only and target not in only:
        continue
    directory = out / target
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.iterdir():  # the regression inputs stay
        if not old.name.startswith("regression-"):
            old.unlink()
    for name, data in list(items.items())[:60]:
        (directory / name).write_bytes(data)
    print(f"{target}: {min(len(items), 60)} seeds")

#!/usr/bin/python3
"""Validates rendered Kubernetes manifests against the API types of
python3-kubernetes, strictly: every object is read into the model class of
its apiVersion and kind, field by field, and a field the type does not have
is an error (as kube-apiserver's strict field validation, kubectl apply
--validate=strict, reports it), as are a value of the wrong type, a missing
required field and a group/version/kind or scope the client does not know.
Custom resources the client has no model for (cert-manager's Issuer and
Certificate, the Prometheus Operator's ServiceMonitor) are checked against a
small schema of their own below.

Usage: validate_manifests.py FILE...   (multi-document YAML; - for stdin)
Prints one line per object, then each file's errors and their count; exits
1 when a file has one.
"""
import re
import sys

import yaml
from kubernetes import client

# The custom resources: for each, its fields as a tree of types ("str",
# "int", "bool", "object" for anything, [T] a list, {key: T} an object whose
# keys are all known; a key ending in "!" is required).
_SELECTOR = {"matchLabels": {"*": "str"}, "matchExpressions": ["object"]}
_SECRET_KEY = {"name!": "str", "key!": "str"}
CUSTOM = {
    ("cert-manager.io/v1", "Issuer"): {
        "selfSigned": {"crlDistributionPoints": ["str"]},
        "ca": {"secretName!": "str", "crlDistributionPoints": ["str"], "ocspServers": ["str"]},
        "acme": "object",
        "vault": "object",
        "venafi": "object",
    },
    ("cert-manager.io/v1", "Certificate"): {
        "secretName!": "str",
        "issuerRef!": {"name!": "str", "kind": "str", "group": "str"},
        "commonName": "str",
        "dnsNames": ["str"],
        "ipAddresses": ["str"],
        "uris": ["str"],
        "duration": "str",
        "renewBefore": "str",
        "isCA": "bool",
        "usages": ["str"],
        "privateKey": {"algorithm": "str", "size": "int", "encoding": "str", "rotationPolicy": "str"},
        "secretTemplate": {"annotations": {"*": "str"}, "labels": {"*": "str"}},
        "subject": "object",
    },
    ("monitoring.coreos.com/v1", "ServiceMonitor"): {
        "selector!": _SELECTOR,
        "namespaceSelector": {"any": "bool", "matchNames": ["str"]},
        "jobLabel": "str",
        "endpoints!": [{
            "port": "str",
            "targetPort": "object",
            "path": "str",
            "scheme": "str",
            "interval": "str",
            "scrapeTimeout": "str",
            "honorLabels": "bool",
            "authorization": {"type": "str", "credentials": _SECRET_KEY},
            "bearerTokenSecret": _SECRET_KEY,
            "tlsConfig": {
                "insecureSkipVerify": "bool",
                "serverName": "str",
                "ca": {"secret": _SECRET_KEY, "configMap": _SECRET_KEY},
                "cert": {"secret": _SECRET_KEY, "configMap": _SECRET_KEY},
                "keySecret": _SECRET_KEY,
            },
            "relabelings": ["object"],
            "metricRelabelings": ["object"],
        }],
    },
}
CUSTOM_SCOPE_NAMESPACED = True  # all three are namespaced kinds

PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float)}
errors = []


def error(where, message):
    errors.append(f"{where}: {message}")


def check_primitive(value, type_name, where):
    if type_name in ("object", "datetime", "date"):
        return
    expected = PRIMITIVES[type_name]
    if isinstance(value, bool) and type_name != "bool":
        error(where, f"expected {type_name}, got a boolean")
    elif not isinstance(value, expected):
        error(where, f"expected {type_name}, got {type(value).__name__} {value!r}")


def check_model(value, type_name, where):
    """value against one of python3-kubernetes' type strings."""
    if value is None:
        return
    if type_name in PRIMITIVES or type_name in ("object", "datetime", "date"):
        return check_primitive(value, type_name, where)
    m = re.fullmatch(r"list\[(.*)\]", type_name)
    if m:
        if not isinstance(value, list):
            return error(where, f"expected a list, got {type(value).__name__}")
        for i, item in enumerate(value):
            check_model(item, m.group(1), f"{where}[{i}]")
        return
    m = re.fullmatch(r"dict\(str, (.*)\)", type_name)
    if m:
        if not isinstance(value, dict):
            return error(where, f"expected an object, got {type(value).__name__}")
        for key, item in value.items():
            check_model(item, m.group(1), f"{where}.{key}")
        return
    model = getattr(client, type_name)
    if not isinstance(value, dict):
        return error(where, f"expected a {type_name} object, got {type(value).__name__}")
    by_json_name = {json_name: attribute for attribute, json_name in model.attribute_map.items()}
    for key, item in value.items():
        if key not in by_json_name:
            error(where, f'unknown field "{key}" (not in {type_name})')
            continue
        check_model(item, model.openapi_types[by_json_name[key]], f"{where}.{key}")


def check_custom(value, schema, where):
    if isinstance(schema, str):
        return check_primitive(value, schema, where)
    if isinstance(schema, list):
        if not isinstance(value, list):
            return error(where, f"expected a list, got {type(value).__name__}")
        for i, item in enumerate(value):
            check_custom(item, schema[0], f"{where}[{i}]")
        return
    if not isinstance(value, dict):
        return error(where, f"expected an object, got {type(value).__name__}")
    if "*" in schema:
        for key, item in value.items():
            check_custom(item, schema["*"], f"{where}.{key}")
        return
    fields = {key.rstrip("!"): sub for key, sub in schema.items()}
    for key in schema:
        if key.endswith("!") and key[:-1] not in value:
            error(where, f'missing required field "{key[:-1]}"')
    for key, item in value.items():
        if key not in fields:
            error(where, f'unknown field "{key}"')
        else:
            check_custom(item, fields[key], f"{where}.{key}")


def api_class(api_version):
    """CoreV1Api for v1, AppsV1Api for apps/v1, RbacAuthorizationV1Api for
    rbac.authorization.k8s.io/v1."""
    group, _, version = api_version.rpartition("/")
    group = group.replace(".k8s.io", "")
    prefix = "".join(part.capitalize() for part in group.split(".")) if group else "Core"
    return getattr(client, f"{prefix}{version.capitalize()}Api", None)


def snake(kind):
    return re.sub(r"(?<=[a-z0-9])([A-Z])|(?<=[A-Z])([A-Z])(?=[a-z])", r"_\1\2", kind).lower()


def validate(obj, where):
    if not isinstance(obj, dict):
        return error(where, "not an object")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    metadata = obj.get("metadata") or {}
    name = metadata.get("name")
    where = f"{kind}/{name}" if kind else where
    if not api_version or not kind or not name:
        return error(where, "apiVersion, kind and metadata.name are required")
    namespaced = None
    if (api_version, kind) in CUSTOM:
        for key in obj:
            if key not in ("apiVersion", "kind", "metadata", "spec"):
                error(where, f'unknown field "{key}"')
        check_model(metadata, "V1ObjectMeta", f"{where}.metadata")
        if "spec" not in obj:
            error(where, 'missing required field "spec"')
        else:
            check_custom(obj["spec"], CUSTOM[(api_version, kind)], f"{where}.spec")
        namespaced = CUSTOM_SCOPE_NAMESPACED
    else:
        version = api_version.rpartition("/")[2]
        model_name = f"{version.capitalize()}{kind}"
        api = api_class(api_version)
        methods = dir(api) if api else []
        if f"create_namespaced_{snake(kind)}" in methods:
            namespaced = True
        elif f"create_{snake(kind)}" in methods:
            namespaced = False
        if not hasattr(client, model_name) or namespaced is None:
            return error(where, f"{api_version} {kind} is not a Kubernetes API type")
        check_model(obj, model_name, where)
        # The client's own reading of it: required fields and enumerations.
        try:
            client.ApiClient()._ApiClient__deserialize(obj, model_name)
        except (ValueError, TypeError) as e:
            error(where, str(e).splitlines()[0])
    if namespaced and not metadata.get("namespace"):
        error(where, "a namespaced kind without metadata.namespace")
    if namespaced is False and metadata.get("namespace"):
        error(where, "a cluster-scoped kind with metadata.namespace")
    print(f"{api_version} {kind} {metadata.get('namespace', '')}/{name}".replace(" /", " "))


def main(paths):
    """Every file's objects, then its errors and a summary line
    ("FILE: N error(s)"); one process for many files, since importing the
    client takes a while."""
    failed = 0
    for path in paths:
        errors.clear()
        count = 0
        text = sys.stdin.read() if path == "-" else open(path).read()
        for i, obj in enumerate(yaml.safe_load_all(text)):
            if obj is None:
                continue
            count += 1
            validate(obj, f"document {i + 1}")
        if count == 0:
            error(path, "no object")
        for e in errors:
            print(f"error: {path}: {e}")
        print(f"{path}: {len(errors)} error(s)")
        failed += bool(errors)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["-"]))

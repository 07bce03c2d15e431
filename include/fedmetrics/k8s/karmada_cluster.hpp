#pragma once
// The control-plane objects that say which member clusters a Karmada
// federation has and how to reach them: cluster.karmada.io/v1alpha1 Cluster
// (Karmada pkg/apis/cluster/v1alpha1/types.go), only the fields that matter
// for reaching the member, and the core/v1 Secret its spec.secretRef names.
// Decoders of untrusted input: errors name the object and the field, nothing
// throws.
#include <compare>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::k8s {

struct SecretReference {
  std::string namespace_name;
  std::string name;
  [[nodiscard]] std::string to_string() const { return namespace_name + "/" + name; }
  friend auto operator<=>(const SecretReference&, const SecretReference&) = default;
};

// metav1.Condition, as far as we read it.
struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
};

struct KarmadaCluster {
  std::string name;                                // metadata.name
  std::string api_endpoint;                        // spec.apiEndpoint: a URL, or host[:port]
  std::string sync_mode;                           // spec.syncMode: "Push" or "Pull"
  std::optional<SecretReference> secret_ref;       // spec.secretRef: data.token and data.caBundle
  bool insecure_skip_tls_verification = false;     // spec.insecureSkipTLSVerification
  std::string proxy_url;                           // spec.proxyURL
  std::optional<Condition> ready;                  // status.conditions[type=Ready]
  std::map<std::string, std::string> annotations;  // metadata.annotations

  // Karmada's IsClusterReady (pkg/util/cluster.go): the Ready condition is "True".
  [[nodiscard]] bool is_ready() const { return ready && ready->status == "True"; }
};

// A ClusterList: one entry per item, so that an item that cannot be decoded
// (an error naming it: `cluster "member2": spec.apiEndpoint: ...`, or
// `items[3]: ...` without a name) does not hide the others. The whole body is
// an error only when it is not a list of objects.
Expected<std::vector<Expected<KarmadaCluster>>> parse_cluster_list(std::string_view body);

// The name Karmada gives the ResourceBinding of a resource
// (names.GenerateBindingName): "<name>-<kind>" in lowercase, "nginx-deployment".
std::string resource_binding_name(std::string_view name, std::string_view kind);

// A core/v1 Secret with its data base64-decoded.
struct Secret {
  std::string namespace_name;
  std::string name;
  std::map<std::string, std::string> data;
};

Expected<Secret> parse_secret(std::string_view body);

}  // namespace fedmetrics::k8s

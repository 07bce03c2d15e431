// Karmada's control plane answers: a cluster.karmada.io ClusterList
// (parse_cluster_list) and a core/v1 Secret (parse_secret, base64 data),
// both tried on the same bytes.
//
// Properties: a list has one entry per item of the document; an item read
// has a name (and a secretRef with both its parts), an item refused says
// why; and what was read is all there is: a Cluster written back as JSON
// with only the fields read, or a Secret with its data encoded again, reads
// back to the same value.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/base64.hpp"
#include "fedmetrics/k8s/karmada_cluster.hpp"
#include "fuzz_check.hpp"

namespace {

using fedmetrics::k8s::KarmadaCluster;
using nlohmann::json;

json cluster_json(const KarmadaCluster& c) {
  json spec = {{"apiEndpoint", c.api_endpoint},
               {"syncMode", c.sync_mode},
               {"proxyURL", c.proxy_url},
               {"insecureSkipTLSVerification", c.insecure_skip_tls_verification}};
  if (c.secret_ref) spec["secretRef"] = {{"namespace", c.secret_ref->namespace_name}, {"name", c.secret_ref->name}};
  json item = {{"metadata", {{"name", c.name}}}, {"spec", std::move(spec)}};
  if (c.ready) {
    item["status"]["conditions"] = json::array({{{"type", c.ready->type},
                                                 {"status", c.ready->status},
                                                 {"reason", c.ready->reason},
                                                 {"message", c.ready->message}}});
  }
  return item;
}

bool same(const KarmadaCluster& a, const KarmadaCluster& b) {
  const auto same_ready = [](const auto& x, const auto& y) {
    if (!x || !y) return !x && !y;
    return x->type == y->type && x->status == y->status && x->reason == y->reason && x->message == y->message;
  };
  return a.name == b.name && a.api_endpoint == b.api_endpoint && a.sync_mode == b.sync_mode &&
         a.secret_ref == b.secret_ref && a.insecure_skip_tls_verification == b.insecure_skip_tls_verification &&
         a.proxy_url == b.proxy_url && same_ready(a.ready, b.ready);
}

void check_cluster_list(std::string_view body) {
  const auto clusters = fedmetrics::k8s::parse_cluster_list(body);
  if (!clusters) {
    FUZZ_CHECK(!clusters.error().message.empty(), "a refused ClusterList without a message");
    return;
  }
  const auto doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!doc.is_discarded() && doc.is_object() && doc.contains("items") && doc["items"].is_array(),
             "a ClusterList read from a body without an items array");
  FUZZ_CHECK(clusters->size() == doc["items"].size(), "%zu entries for %zu items", clusters->size(),
             doc["items"].size());
  for (const auto& cluster : *clusters) {
    if (!cluster) {
      FUZZ_CHECK(!cluster.error().message.empty(), "an item error without a message");
      continue;
    }
    FUZZ_CHECK(!cluster->name.empty(), "a Cluster read without a name");
    if (cluster->secret_ref)
      FUZZ_CHECK(!cluster->secret_ref->namespace_name.empty() && !cluster->secret_ref->name.empty(),
                 "cluster \"%s\": a secretRef without its namespace or name", cluster->name.c_str());
    const json list = {{"kind", "ClusterList"}, {"items", json::array({cluster_json(*cluster)})}};
    const auto again = fedmetrics::k8s::parse_cluster_list(list.dump());
    FUZZ_CHECK(again && again->size() == 1 && (*again)[0], "cluster \"%s\" written back does not read: %s",
               cluster->name.c_str(), list.dump().c_str());
    FUZZ_CHECK(same(*(*again)[0], *cluster), "cluster \"%s\" reads back differently: %s", cluster->name.c_str(),
               list.dump().c_str());
  }
}

void check_secret(std::string_view body) {
  const auto secret = fedmetrics::k8s::parse_secret(body);
  if (!secret) {
    FUZZ_CHECK(!secret.error().message.empty(), "a refused Secret without a message");
    return;
  }
  json encoded = json::object();
  for (const auto& [key, value] : secret->data) encoded[key] = fedmetrics::k8s::base64_encode(value);
  const json again_doc = {{"kind", "Secret"},
                          {"metadata", {{"namespace", secret->namespace_name}, {"name", secret->name}}},
                          {"data", std::move(encoded)}};
  const auto again = fedmetrics::k8s::parse_secret(again_doc.dump());
  FUZZ_CHECK(again, "Secret %s/%s written back does not read", secret->namespace_name.c_str(), secret->name.c_str());
  FUZZ_CHECK(
      again->namespace_name == secret->namespace_name && again->name == secret->name && again->data == secret->data,
      "Secret %s/%s reads back differently", secret->namespace_name.c_str(), secret->name.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto body = fedmetrics::fuzz::as_text(data, size);
  check_cluster_list(body);
  check_secret(body);
  return 0;
}

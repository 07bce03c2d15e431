// Karmada's control plane answers: a cluster.karmada.io ClusterList
// (parse_cluster_list) and a core/v1 Secret (parse_secret, base64 data),
// both tried on the same bytes.
#include <cstddef>
#include <cstdint>

#include "fedmetrics/k8s/karmada_cluster.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto body = fedmetrics::fuzz::as_text(data, size);
  if (const auto clusters = fedmetrics::k8s::parse_cluster_list(body)) {
    for (const auto& cluster : *clusters) {
      if (!cluster) FUZZ_CHECK(!cluster.error().message.empty(), "an item error without a message");
      else (void)cluster->is_ready();
    }
  }
  (void)fedmetrics::k8s::parse_secret(body);
  return 0;
}

#include <nlohmann/json.hpp>

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/k8s/status.hpp"

namespace fedmetrics::kube {

std::string describe(const HttpResult& result) {
  if (const auto* e = std::get_if<Error>(&result)) return e->message;
  const auto& reply = std::get<HttpReply>(result);
  std::string out = "HTTP " + std::to_string(reply.status);
  auto doc = nlohmann::json::parse(reply.body, nullptr, false);
  if (doc.is_discarded()) return out;
  auto status = k8s::Status::from_json(doc);
  return status && !status->message.empty() ? out + ": " + status->message : out;
}

}  // namespace fedmetrics::kube

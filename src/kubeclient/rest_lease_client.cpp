// The leader election's Leases, on the control plane's lease client (its own connections).
#include "fedmetrics/kubeclient/rest_control_plane.hpp"
#include "kubeclient/rest_json.hpp"

namespace fedmetrics::kubeclient {

using nlohmann::json;

namespace {

kube::ResourcePath leases(const std::string& ns, std::string name = {}) {
  return kube::ResourcePath::in_group("coordination.k8s.io", "v1", "leases", ns, std::move(name));
}

}  // namespace

// The HTTPS client answers every request by its deadline (https_client.hpp).
async::Task<k8s::Expected<std::optional<json>>> RestLeaseClient::get(const std::string& ns, const std::string& name,
                                                                     Deadline deadline) {
  auto op = request_json(control_plane_->lease_client(), "GET", leases(ns, name), "", "", deadline);
  auto reply = co_await std::move(op);
  if (reply.body) co_return std::optional<json>(std::move(*reply.body));
  if (reply.status == 404) co_return std::optional<json>();
  co_return reply.body.error();
}

async::Task<k8s::Expected<json>> RestLeaseClient::create(const std::string& ns, const json& lease, Deadline deadline) {
  auto op =
      request_json(control_plane_->lease_client(), "POST", leases(ns), "application/json", lease.dump(), deadline);
  auto reply = co_await std::move(op);
  co_return std::move(reply.body);
}

async::Task<k8s::Expected<json>> RestLeaseClient::update(const std::string& ns, const std::string& name,
                                                         const json& lease, Deadline deadline) {
  auto op =
      request_json(control_plane_->lease_client(), "PUT", leases(ns, name), "application/json", lease.dump(), deadline);
  auto reply = co_await std::move(op);
  co_return std::move(reply.body);
}

}  // namespace fedmetrics::kubeclient

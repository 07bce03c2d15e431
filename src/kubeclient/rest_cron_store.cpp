// The CronFederatedHPAs, on the control plane's client.
#include "fedmetrics/kubeclient/rest_control_plane.hpp"
#include "kubeclient/collection_watch.hpp"
#include "kubeclient/rest_json.hpp"

namespace fedmetrics::kubeclient {

using nlohmann::json;

async::Task<k8s::Expected<std::vector<json>>> RestCronStore::list(const k8s::LabelSelector& selector) {
  // Never from a watch's cache: the status it holds may lag a change of leader.
  auto op = request_json(control_plane_->client(), "GET",
                         karmada_autoscaling("cronfederatedhpas").with("labelSelector", selector.to_string()), "", "",
                         std::chrono::steady_clock::now() + control_plane_->timeout());
  auto reply = co_await std::move(op);
  co_return items_of(std::move(reply), "CronFederatedHPA list");
}

async::Task<k8s::Expected<bool>> RestCronStore::update_status(const std::string& namespace_name,
                                                              const std::string& name, const json& status) {
  auto path = karmada_autoscaling("cronfederatedhpas", namespace_name, name);
  path.subresource = "status";
  auto op = request_json(control_plane_->client(), "PATCH", std::move(path), "application/merge-patch+json",
                         json{{"status", status}}.dump(), std::chrono::steady_clock::now() + control_plane_->timeout());
  auto reply = co_await std::move(op);
  co_return written(reply);
}

std::unique_ptr<controller::Watch> RestCronStore::watch(const k8s::LabelSelector& selector,
                                                        std::function<void()> on_change) {
  return std::make_unique<CollectionWatch>(control_plane_->client(), control_plane_->executor(), "cronfederatedhpas",
                                           "cron: CronFederatedHPAs", selector, control_plane_->timeout(),
                                           [on_change = std::move(on_change)](const kube::ReflectorChange&) {
                                             if (on_change) on_change();
                                           });
}

}  // namespace fedmetrics::kubeclient

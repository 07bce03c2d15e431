#include "fedmetrics/sim/member_objects.hpp"

#include <algorithm>

#include "fedmetrics/k8s/url.hpp"
#include "fedmetrics/sim/member_api.hpp"
#include "fedmetrics/sim/member_hpa_type.hpp"
#include "sim/http_util.hpp"
#include "sim/store_rest.hpp"
#include "sim/table_json.hpp"

namespace fedmetrics::sim {

using k8s::Status;
using nlohmann::json;
using transport::HttpRequest;
using transport::HttpResponse;

MemberObjects::MemberObjects(std::function<k8s::Timestamp()> clock, std::size_t watch_history)
    : store_(std::make_shared<ObjectStore>(clock, watch_history)), clock_(std::move(clock)) {
  auto type = horizontal_pod_autoscaler_type();
  store_->register_type(type);
  hpa_ = store_->find_type(type.group, type.version, type.resource);
}

bool MemberObjects::handles(const HttpRequest& request) {
  auto target = k8s::parse_request_target(request.target);
  if (!target) return false;
  const auto& s = target->segments;
  if (!s.empty() && s[0] == "openapi") return true;
  return s.size() >= 4 && s[0] == "apis" && s[1] == "autoscaling" && s[2] == "v2";
}

HttpResponse MemberObjects::handle(const Federation& federation, std::size_t member, const HttpRequest& request,
                                   double fault_draw) {
  using detail::status_response;
  auto target = k8s::parse_request_target(request.target);
  if (!target) return status_response(Status::bad_request("invalid URL escape in the request path"));
  if (!member_authenticated(federation, member, request)) return status_response(Status::unauthorized());
  if (fault_draw < federation.members[member].faults.error_rate)
    return status_response(Status::internal_error("simulated fault"));
  const auto& s = target->segments;
  if (s[0] == "openapi") {
    // Only the stored types need the fieldValidation declaration: the rest is read-only here.
    return detail::openapi_v3(s, {*hpa_}, {{"autoscaling", {"autoscaling/v2"}}});
  }
  // /apis/autoscaling/v2/[namespaces/{ns}/]horizontalpodautoscalers[/{name}[/status]]
  std::vector<std::string> parts(s.begin() + 3, s.end());
  detail::ResourcePath path;
  if (parts.size() >= 3 && parts[0] == "namespaces") {
    path.namespace_name = parts[1];
    parts.erase(parts.begin(), parts.begin() + 2);
  }
  if (parts.empty() || parts[0] != hpa_->resource || parts.size() > 3)
    return status_response(Status::not_found_resource());
  if (parts.size() >= 2) path.name = parts[1];
  if (parts.size() == 3) path.subresource = parts[2];
  if (!path.name.empty() && path.namespace_name.empty()) return status_response(Status::not_found_resource());

  detail::StoredServing serving;
  const auto& namespaces = federation.world.namespaces;
  serving.namespace_exists = [&namespaces](const std::string& ns) {
    return std::find(namespaces.begin(), namespaces.end(), ns) != namespaces.end();
  };
  auto table = detail::table_request(request, *target);
  if (!table) return status_response(Status::bad_request(table.error().message));
  const bool watch = k8s::query_bool(target->query, "watch");
  serving.answer = [this, include = request.method == "GET" && !watch ? *table : std::nullopt](StoreResult result,
                                                                                               int success) {
    if (auto* doc = std::get_if<json>(&result); doc && include) {
      json t = horizontal_pod_autoscaler_table(*doc, clock_());
      detail::complete_table(t, *doc, *include);
      return detail::json_response(t.dump(), success);
    }
    return detail::store_response(result, success);
  };
  if (watch && *table) {
    serving.watch_object = detail::watch_tables(
        [clock = clock_](json& object) { return horizontal_pod_autoscaler_table(object, clock()); }, **table);
  }
  return detail::serve_stored(*store_, *hpa_, path, request, *target, serving);
}

}  // namespace fedmetrics::sim

#include "fedmetrics/sim/control_api.hpp"

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/k8s/url.hpp"
#include "sim/http_util.hpp"

namespace fedmetrics::sim {

using nlohmann::json;
using transport::HttpResponse;

namespace {

using detail::json_response;
using detail::status_response;
using k8s::Status;

json load_json(const Load& load) {
  return json{{"cpu", load.cpu.to_string()}, {"requestsPerSecond", load.requests_per_second.to_string()}};
}

k8s::Expected<json> parse_body(const std::string& body) {
  auto parsed = json::parse(body, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return k8s::Error{"the body must be a JSON object"};
  return parsed;
}

k8s::Expected<k8s::Quantity> quantity_field(const json& body, const char* key, k8s::Quantity fallback) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  auto q = k8s::quantity_from_json(*it);
  if (!q) return q.error().at(key);
  if (q->sign() < 0) return k8s::Error{"must not be negative"}.at(key);
  return q;
}

ControlOutcome bad(std::string_view message) { return {status_response(Status::bad_request(message)), std::nullopt}; }

// A load body ({"cpu":"2","requestsPerSecond":"10"}); absent fields keep `base`.
k8s::Expected<Load> load_from_body(const json& body, Load base) {
  for (const auto& [key, value] : body.items())
    if (key != "cpu" && key != "requestsPerSecond") return k8s::Error{key + ": unknown field"};
  auto cpu = quantity_field(body, "cpu", base.cpu);
  if (!cpu) return cpu.error();
  auto rps = quantity_field(body, "requestsPerSecond", base.requests_per_second);
  if (!rps) return rps.error();
  return Load{*cpu, *rps};
}

json member_loads_json(const Federation& f, const WorkloadState& state) {
  json out = json::object();
  for (const auto& [member, load] : state.member_loads) out[f.world.members[member].name] = load_json(load);
  return out;
}

// /sim/v1/namespaces/{ns}/workloads/{name}/members/{member}/load: the load
// offered to one member's pods alone. GET answers the member's own load, or
// 404 while it shares the workload's; PUT sets it (absent fields start from
// the workload's load); DELETE returns the member to the shared load.
ControlOutcome member_load(const Federation& current, const transport::HttpRequest& request, std::size_t workload,
                           const std::string& member_name) {
  auto member = current.world.member_index(member_name);
  if (!member) return {status_response(Status::not_found({"sim", "members"}, member_name)), std::nullopt};
  const auto& state = current.workloads[workload];
  auto own = state.member_loads.find(*member);
  const auto& method = request.method;
  if (method == "GET") {
    if (own == state.member_loads.end())
      return {status_response(Status::not_found({"sim", "memberloads"}, member_name)), std::nullopt};
    return {json_response(load_json(own->second).dump()), std::nullopt};
  }
  if (method == "DELETE")
    return {json_response(load_json(state.load).dump()), current.with_member_load(workload, *member, std::nullopt)};
  if (method != "PUT")
    return {status_response(Status::method_not_allowed(method, {"sim", "memberloads"})), std::nullopt};
  auto body = parse_body(request.body);
  if (!body) return bad(body.error().message);
  auto load = load_from_body(*body, own == state.member_loads.end() ? state.load : own->second);
  if (!load) return bad(load.error().message);
  return {json_response(load_json(*load).dump()), current.with_member_load(workload, *member, *load)};
}

}  // namespace

json world_summary(const Federation& f, k8s::Timestamp now) {
  json members = json::array();
  for (std::size_t i = 0; i < f.world.members.size(); ++i) {
    std::size_t pods = 0;
    for (const auto& p : f.members[i].pods)
      if (f.exists(p, now)) ++pods;
    members.push_back({{"name", f.world.members[i].name}, {"pods", pods}, {"faults", to_json(f.members[i].faults)}});
  }
  json workloads = json::array();
  for (std::size_t w = 0; w < f.world.workloads.size(); ++w) {
    json placement = json::object();
    for (const auto& t : f.workloads[w].placement) placement[t.name] = t.replicas;
    workloads.push_back({{"namespace", f.world.workloads[w].namespace_name},
                         {"name", f.world.workloads[w].name},
                         {"replicas", f.workloads[w].replicas},
                         {"readyReplicas", f.serving_pods(w, now)},
                         {"placement", placement},
                         {"load", load_json(f.workloads[w].load)},
                         {"memberLoads", member_loads_json(f, f.workloads[w])}});
  }
  return json{{"members", members}, {"workloads", workloads}, {"resourceVersion", f.resource_version}};
}

ControlOutcome handle_control_request(const Federation& current, const transport::HttpRequest& request,
                                      k8s::Timestamp now) {
  // A bad escape leaves no segments: the 404 below.
  auto target = k8s::parse_request_target(request.target).value_or(k8s::RequestTarget{});
  const auto& s = target.segments;
  const auto& method = request.method;
  if (s.size() == 1 && s[0] == "healthz") return {detail::text_response("ok"), std::nullopt};
  if (s.size() < 2 || s[0] != "sim" || s[1] != "v1")
    return {status_response(Status::not_found_resource()), std::nullopt};

  if (s.size() == 3 && s[2] == "world") {
    if (method != "GET") return {status_response(Status::method_not_allowed(method, {"sim", "world"})), std::nullopt};
    return {json_response(world_summary(current, now).dump()), std::nullopt};
  }

  // /sim/v1/namespaces/{ns}/workloads/{name}/{load|replicas}
  if (s.size() == 7 && s[2] == "namespaces" && s[4] == "workloads" && (s[6] == "load" || s[6] == "replicas")) {
    auto index = current.world.workload_index(s[3], s[5]);
    if (!index) return {status_response(Status::not_found({"sim", "workloads"}, s[3] + "/" + s[5])), std::nullopt};
    if (method == "GET") {
      const auto& state = current.workloads[*index];
      return {json_response((s[6] == "load" ? load_json(state.load) : json{{"replicas", state.replicas}}).dump()),
              std::nullopt};
    }
    if (method != "PUT")
      return {status_response(Status::method_not_allowed(method, {"sim", "workloads"})), std::nullopt};
    auto body = parse_body(request.body);
    if (!body) return bad(body.error().message);
    if (s[6] == "load") {
      auto load = load_from_body(*body, current.workloads[*index].load);
      if (!load) return bad(load.error().message);
      return {json_response(load_json(*load).dump()), current.with_load(*index, *load)};
    }
    auto it = body->find("replicas");
    if (it == body->end() || !it->is_number_integer() || it->get<std::int64_t>() < 0 ||
        it->get<std::int64_t>() > 10'000)
      return bad("replicas: expected an integer between 0 and 10000");
    auto replicas = static_cast<std::int32_t>(it->get<std::int64_t>());
    auto updated = current.with_replicas(*index, replicas, now);
    json placement = json::object();
    for (const auto& t : updated.workloads[*index].placement) placement[t.name] = t.replicas;
    return {json_response(json{{"replicas", replicas}, {"placement", placement}}.dump()), std::move(updated)};
  }

  if (s.size() == 9 && s[2] == "namespaces" && s[4] == "workloads" && s[6] == "members" && s[8] == "load") {
    auto index = current.world.workload_index(s[3], s[5]);
    if (!index) return {status_response(Status::not_found({"sim", "workloads"}, s[3] + "/" + s[5])), std::nullopt};
    return member_load(current, request, *index, s[7]);
  }

  // /sim/v1/members/{name}/faults
  if (s.size() == 5 && s[2] == "members" && s[4] == "faults") {
    auto index = current.world.member_index(s[3]);
    if (!index) return {status_response(Status::not_found({"sim", "members"}, s[3])), std::nullopt};
    const auto& faults = current.members[*index].faults;
    if (method == "GET") return {json_response(to_json(faults).dump()), std::nullopt};
    if (method == "DELETE") return {json_response(to_json(Faults{}).dump()), current.with_faults(*index, Faults{})};
    if (method != "PUT" && method != "PATCH")
      return {status_response(Status::method_not_allowed(method, {"sim", "faults"})), std::nullopt};
    auto body = parse_body(request.body);
    if (!body) return bad(body.error().message);
    auto updated = faults_from_json(*body, method == "PATCH" ? faults : Faults{});
    if (!updated) return bad(updated.error().message);
    return {json_response(to_json(*updated).dump()), current.with_faults(*index, *updated)};
  }

  // /sim/v1/externalmetrics/{name}
  if (s.size() == 4 && s[2] == "externalmetrics") {
    bool known = false;
    for (const auto& e : current.world.external_metrics) known = known || e.name == s[3];
    if (!known) return {status_response(Status::not_found({"sim", "externalmetrics"}, s[3])), std::nullopt};
    if (method != "PUT")
      return {status_response(Status::method_not_allowed(method, {"sim", "externalmetrics"})), std::nullopt};
    auto body = parse_body(request.body);
    if (!body) return bad(body.error().message);
    if (!body->contains("value")) return bad("value: required");
    auto value = quantity_field(*body, "value", {});
    if (!value) return bad(value.error().message);
    return {json_response(json{{"name", s[3]}, {"value", value->to_string()}}.dump()),
            current.with_external_value(s[3], *value)};
  }
  return {status_response(Status::not_found_resource()), std::nullopt};
}

}  // namespace fedmetrics::sim

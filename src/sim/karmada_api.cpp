#include "fedmetrics/sim/karmada_api.hpp"

#include <algorithm>
#include <utility>
#include <variant>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/k8s/url.hpp"
#include "fedmetrics/sim/event_fields.hpp"
#include "sim/access.hpp"
#include "sim/http_util.hpp"
#include "sim/karmada_call.hpp"
#include "sim/store_rest.hpp"
#include "sim/table_json.hpp"

namespace fedmetrics::sim {

using nlohmann::json;
using transport::HttpRequest;
using transport::HttpResponse;

namespace {

using detail::header;
using detail::json_response;
using detail::status_response;
using detail::text_response;
using k8s::Status;

// The types a Karmada control plane serves that the metrics path and the
// autoscaler touch (plus what kubectl needs around them).
std::vector<ResourceType> karmada_types() {
  return {
      {"", "v1", "namespaces", "Namespace", false, true, {"ns"}},
      {"", "v1", "secrets", "Secret", true, false, {}},
      {"", "v1", "configmaps", "ConfigMap", true, false, {"cm"}},
      {"", "v1", "services", "Service", true, true, {"svc"}},
      {"", "v1", "events", "Event", true, false, {"ev"}},
      {"", "v1", "pods", "Pod", true, true, {"po"}},
      {"", "v1", "nodes", "Node", false, true, {"no"}},
      {"apps", "v1", "deployments", "Deployment", true, true, {"deploy"}},
      {"cluster.karmada.io", "v1alpha1", "clusters", "Cluster", false, true, {}},
      {"autoscaling.karmada.io", "v1alpha1", "federatedhpas", "FederatedHPA", true, true, {"fhpa"}},
      {"autoscaling.karmada.io", "v1alpha1", "cronfederatedhpas", "CronFederatedHPA", true, true, {"cronfhpa"}},
      {"policy.karmada.io", "v1alpha1", "propagationpolicies", "PropagationPolicy", true, false, {"pp"}},
      {"work.karmada.io", "v1alpha2", "resourcebindings", "ResourceBinding", true, true, {"rb"}},
      {"coordination.k8s.io", "v1", "leases", "Lease", true, false, {}},
      {"events.k8s.io", "v1", "events", "Event", true, false, {"ev"}},
      {"apiregistration.k8s.io", "v1", "apiservices", "APIService", false, true, {}},
      // What deploy/*.yaml creates besides, so that it applies as it would to a real control plane.
      {"", "v1", "serviceaccounts", "ServiceAccount", true, false, {"sa"}},
      {"rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false, false, {}},
      {"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", false, false, {}},
      {"rbac.authorization.k8s.io", "v1", "roles", "Role", true, false, {}},
      {"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true, false, {}},
      {"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true, true, {"pdb"}},
  };
}

std::optional<detail::UserInfo> authenticate(const World& world, const ObjectStore& store,
                                             const detail::ServiceAccountTokens& tokens, const HttpRequest& request,
                                             k8s::Timestamp now) {
  auto value = header(request, "Authorization");
  auto space = value.find(' ');
  if (space == std::string_view::npos || k8s::ascii_lowercase(value.substr(0, space)) != "bearer") return std::nullopt;
  return detail::authenticate_token(world, store, tokens, value.substr(space + 1), now);
}

json sar_spec_for(const detail::UserInfo& user, const auth::RequestAttributes& info) {
  json spec{{"user", user.name}, {"groups", user.groups}};
  if (info.resource_request) {
    spec["resourceAttributes"] = {{"namespace", info.namespace_name},
                                  {"verb", info.verb},
                                  {"group", info.api_group},
                                  {"version", info.api_version},
                                  {"resource", info.resource},
                                  {"subresource", info.subresource},
                                  {"name", info.name}};
  } else {
    spec["nonResourceAttributes"] = {{"path", info.path}, {"verb", info.verb}};
  }
  return spec;
}

}  // namespace

KarmadaApi::KarmadaApi(std::shared_ptr<ObjectStore> store, KarmadaHooks hooks)
    : store_(std::move(store)), hooks_(std::move(hooks)), tokens_(std::make_shared<detail::ServiceAccountTokens>()) {
  for (auto& t : karmada_types()) {
    if (t.kind == "Event") t.selectable_fields = t.group.empty() ? core_event_fields() : events_v1_event_fields();
    store_->register_type(std::move(t));
  }
}

namespace detail {

HttpResponse KarmadaCall::fail(const k8s::Status& s) { return status_response(s); }

// `table`: what the request asked of a Table (table_request).
HttpResponse KarmadaCall::answered(StoreResult result, const ResourceType& type,
                                   std::optional<k8s::IncludeObject> table, int success) const {
  if (auto* doc = std::get_if<json>(&result)) {
    as_read(*doc, type, *federation, hooks.clock());
    if (table && (info.verb == "get" || info.verb == "list")) {
      json t = karmada_table(*doc, type, hooks.clock());
      detail::complete_table(t, *doc, *table);
      return json_response(t.dump(), success);
    }
  }
  return detail::store_response(result, success);
}

// What a watch's events carry: the objects as read, or their Tables. The
// function outlives this call, so it holds the hooks it needs, not `this`.
std::function<json(const json&)> KarmadaCall::watch_object(const ResourceType& type,
                                                           std::optional<k8s::IncludeObject> table) const {
  auto read = [type = &type, clock = hooks.clock, federation_of = hooks.federation](json& object) {
    const auto now = clock();
    if (auto federation = federation_of()) as_read(object, *type, *federation, now);
    return now;
  };
  if (table) {
    return detail::watch_tables(
        [read, type = &type](json& object) {
          const auto now = read(object);
          return karmada_table(object, *type, now);
        },
        *table);
  }
  if (type.resource != "deployments" || type.group != "apps") return {};
  return [read](const json& object) {
    json out = object;
    read(out);
    return out;
  };
}

HttpResponse KarmadaCall::resource() {
  const auto* type = store.find_type(info.api_group, info.api_version, info.resource);
  if (type == nullptr) return fail(Status::not_found_resource());
  if (!type->namespaced && !info.namespace_name.empty() && info.resource != "namespaces")
    return fail(Status::not_found_resource());
  if (!rest.empty()) return fail(Status::not_found_resource());
  if (info.subresource == "scale" && type->group == "apps" && type->resource == "deployments") return scale(*type);
  detail::StoredServing serving;
  serving.namespace_exists = [this](const std::string& ns) { return namespace_exists(ns); };
  auto table = detail::table_request(request, target);
  if (!table) return fail(Status::bad_request(table.error().message));
  serving.answer = [this, type, table = *table](StoreResult result, int success) {
    return answered(std::move(result), *type, table, success);
  };
  if (info.verb == "watch") serving.watch_object = watch_object(*type, *table);
  serving.after_update = [this, type](const StoreResult& result) { after_deployment_change(*type, result); };
  return detail::serve_stored(store, *type, {info.namespace_name, name, info.subresource}, request, target, serving);
}

bool KarmadaCall::namespace_exists(const std::string& ns) const {
  const auto* namespaces = store.find_type("", "v1", "namespaces");
  return std::holds_alternative<json>(store.get(*namespaces, "", ns));
}

}  // namespace detail

async::Task<HttpResponse> KarmadaApi::handle(HttpRequest request) {
  // Bodies and stored objects are client input: a field of an unexpected
  // type is the client's error (400), never the simulator's end.
  std::variant<HttpResponse, ForwardedRequest> outcome;
  try {
    outcome = answer(std::move(request));
  } catch (const nlohmann::json::exception& e) {
    outcome = status_response(Status::bad_request(std::string("the request could not be handled: ") + e.what()));
  }
  if (auto* forwarded = std::get_if<ForwardedRequest>(&outcome)) {
    // A named task: no temporary in the co_await expression (GCC 12).
    auto relayed = hooks_.forward(std::move(forwarded->upstream), std::move(forwarded->request));
    co_return co_await std::move(relayed);
  }
  co_return std::move(std::get<HttpResponse>(outcome));
}

std::variant<HttpResponse, ForwardedRequest> KarmadaApi::answer(HttpRequest request) {
  auto decoded = k8s::parse_request_target(request.target);
  if (!decoded) return status_response(Status::bad_request("invalid URL escape in the request path"));
  const auto& target = *decoded;
  const auto& s = target.segments;
  if (s.size() == 1 && (s[0] == "healthz" || s[0] == "livez" || s[0] == "readyz")) return text_response("ok");
  auto federation = hooks_.federation();
  const auto now = hooks_.clock();
  const auto user = authenticate(federation->world, *store_, *tokens_, request, now);
  if (!user) return status_response(Status::unauthorized());
  auto attributes = auth::request_attributes(request.method, target);
  // The deprecated forms with the verb in the path (/api/v1/watch/..., /proxy/...)
  // are not served here, and one with nothing after the verb names nothing.
  if (!attributes || attributes->verb_in_path) return status_response(Status::not_found_resource());
  const auto& info = *attributes;
  // The object the path names (a list's fieldSelector may name one for the authorizer).
  const std::string name = info.parts.size() >= 2 ? info.parts[1] : std::string();
  const std::vector<std::string> rest(info.parts.begin() + std::min<std::ptrdiff_t>(3, std::ssize(info.parts)),
                                      info.parts.end());
  // Discovery is open to every authenticated user (RBAC's system:discovery).
  const bool open_to_all = !info.resource_request &&
                           (s.empty() || s[0] == "api" || s[0] == "apis" || s[0] == "version" || s[0] == "openapi");
  // Asking about oneself is open to every authenticated user (RBAC's system:basic-user).
  const bool self_review = request.method == "POST" && name.empty() &&
                           ((info.api_group == "authorization.k8s.io" && info.resource == "selfsubjectaccessreviews") ||
                            (info.api_group == "authentication.k8s.io" && info.resource == "selfsubjectreviews"));
  if (!open_to_all && !self_review) {
    auto decision = detail::authorize_user(*store_, *user, sar_spec_for(*user, info));
    if (!decision.allowed) {
      if (info.resource_request)
        return status_response(Status::forbidden(user->name, info.verb, {info.api_group, info.resource},
                                                 info.subresource, info.namespace_name, info.name, decision.reason));
      return status_response(Status::forbidden_path(user->name, info.verb, info.path));
    }
  }
  detail::KarmadaCall call{*store_, hooks_, federation, *user, request, target, info, name, rest};
  if (auto aggregated = call.aggregated()) return std::move(*aggregated);
  if (auto answer = discovery(request, target)) return std::move(*answer);
  if (info.resource_request) {
    const auto& world = federation->world;
    const bool post = request.method == "POST";
    const auto& group = info.api_group;
    if (post && group == "authentication.k8s.io" && info.resource == "tokenreviews" && name.empty())
      return detail::token_review(world, *store_, *tokens_, request.body, now);
    if (post && group == "authorization.k8s.io" && info.resource == "subjectaccessreviews" && name.empty())
      return detail::subject_access_review(world, *store_, request.body);
    if (self_review && info.resource == "selfsubjectaccessreviews")
      return detail::self_subject_access_review(*store_, *user, request.body);
    if (self_review) return detail::self_subject_review(*user, now);
    if (group.empty() && info.resource == "serviceaccounts" && info.subresource == "token" && !name.empty() &&
        rest.empty()) {
      if (!post) return status_response(Status::method_not_allowed(info.verb, {"", "serviceaccounts/token"}));
      return detail::token_request(*store_, *tokens_, info.namespace_name, name, request.body, now);
    }
    if (group == detail::kClusterGroup && info.resource == "clusters" && info.subresource == "proxy" && !name.empty())
      return call.cluster_proxy();
    if ((s[0] == "api" && info.api_version == "v1") || s[0] == "apis") return call.resource();
  }
  return status_response(Status::not_found_resource());
}

}  // namespace fedmetrics::sim

#include "sim/store_rest.hpp"

#include <algorithm>
#include <random>

#include "sim/http_util.hpp"

namespace fedmetrics::sim::detail {

using k8s::Status;
using nlohmann::json;
using transport::HttpRequest;
using transport::HttpResponse;

k8s::Expected<json> parse_object(const std::string& body) {
  auto parsed = json::parse(body, nullptr, false);
  if (parsed.is_discarded()) return k8s::Error{"the request body is not valid JSON"};
  if (!parsed.is_object()) return k8s::Error{"the request body must be a JSON object"};
  return parsed;
}

// A DELETE's body: DeleteOptions, of which the preconditions count here
// (propagationPolicy and gracePeriodSeconds have nothing to act on in the
// simulated store). No body: none.
k8s::Expected<ObjectStore::DeletePreconditions> delete_preconditions(const std::string& body) {
  ObjectStore::DeletePreconditions out;
  if (body.empty()) return out;
  auto options = parse_object(body);
  if (!options) return options.error();
  const auto it = options->find("preconditions");
  if (it == options->end() || it->is_null()) return out;
  if (!it->is_object()) return k8s::Error{"DeleteOptions.preconditions must be an object"};
  for (const auto& [field, target] :
       {std::pair{"uid", &out.uid}, std::pair{"resourceVersion", &out.resource_version}}) {
    const auto value = it->find(field);
    if (value == it->end() || value->is_null()) continue;
    if (!value->is_string())
      return k8s::Error{std::string("DeleteOptions.preconditions.") + field + " must be a string"};
    *target = value->get<std::string>();
  }
  return out;
}

HttpResponse store_response(const StoreResult& result, int success) {
  if (const auto* s = std::get_if<Status>(&result)) return status_response(*s);
  return json_response(std::get<json>(result).dump(), success);
}

Status unsupported_media_type() {
  Status s;
  s.code = 415;
  s.reason = "UnsupportedMediaType";
  s.message =
      "the body of the request was in an unknown format - accepted media types include: "
      "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json";
  return s;
}

namespace {

std::int64_t int_or(const k8s::QueryValues& q, std::string_view key, std::int64_t fallback) {
  auto v = k8s::query_value(q, key);
  if (v.empty()) return fallback;
  try {
    return std::stoll(v);
  } catch (...) {
    return fallback;
  }
}

// A watch: the events as newline-delimited JSON on a streamed answer, until
// timeoutSeconds or apiserver's default, a random time in [30, 60) minutes.
HttpResponse watch(ObjectStore& store, const ResourceType& type, const std::string& namespace_name,
                   k8s::LabelSelector labels, k8s::FieldSelector fields, const k8s::RequestTarget& target,
                   const StoredServing& serving) {
  auto timeout = std::chrono::seconds(int_or(target.query, "timeoutSeconds", 0));
  if (timeout.count() <= 0) {
    static thread_local std::mt19937 rng{std::random_device{}()};
    timeout = std::chrono::seconds(1800 + rng() % 1800);
  }
  auto stream = std::make_shared<transport::ResponseStream>();
  auto id = store.watch(
      type, namespace_name, std::move(labels), std::move(fields), k8s::query_value(target.query, "resourceVersion"),
      [stream, as = serving.watch_object](const WatchEvent& e) {
        // An ERROR's Status is sent as it is, whatever the watch asked for.
        const bool transform = as && e.type != "ERROR";
        return stream->write(json{{"type", e.type}, {"object", transform ? as(e.object) : e.object}}.dump() + "\n");
      });
  if (id) {
    stream->close_after(timeout);
    // The body ended, or the client left: the store stops feeding it at once.
    stream->on_abandon([store = &store, id = *id] { store->unwatch(id); });
  } else {
    stream->close();
  }
  HttpResponse head;
  head.stream = std::move(stream);
  return head;
}

}  // namespace

HttpResponse serve_stored(ObjectStore& store, const ResourceType& type, const ResourcePath& path,
                          const HttpRequest& request, const k8s::RequestTarget& target, const StoredServing& serving) {
  auto fail = [](const Status& s) { return status_response(s); };
  auto answer = [&](StoreResult result, int success = 200) {
    return serving.answer ? serving.answer(std::move(result), success) : store_response(result, success);
  };
  if (!path.subresource.empty() && (path.subresource != "status" || !type.status_subresource))
    return fail(Status::not_found_resource());
  const std::string ns = type.namespaced ? path.namespace_name : std::string();
  const auto& m = request.method;
  if (m == "GET" || m == "HEAD") {
    if (!path.name.empty()) return answer(store.get(type, ns, path.name));
    auto labels = k8s::LabelSelector::parse(k8s::query_value(target.query, "labelSelector"));
    if (!labels) return fail(Status::bad_request("unable to parse requirement: " + labels.error().message));
    auto fields = parse_field_selector(type, k8s::query_value(target.query, "fieldSelector"));
    if (!fields) return fail(Status::bad_request(fields.error().message));
    if (k8s::query_bool(target.query, "watch"))
      return watch(store, type, ns, std::move(*labels), std::move(*fields), target, serving);
    return answer(store.list(type, ns, *labels, *fields));
  }
  if (m == "POST") {
    if (!path.name.empty()) return fail(Status::method_not_allowed(m, type.group_resource()));
    if (type.namespaced && ns.empty()) return fail(Status::not_found_resource());
    auto body = parse_object(request.body);
    if (!body) return fail(Status::bad_request(body.error().message));
    if (type.namespaced && serving.namespace_exists && !serving.namespace_exists(ns))
      return fail(Status::not_found({"", "namespaces"}, ns));
    return answer(store.create(type, ns, std::move(*body)), 201);
  }
  if (path.name.empty()) return fail(Status::method_not_allowed(m, type.group_resource()));
  auto updated = [&](StoreResult result) {
    if (serving.after_update && path.subresource.empty()) serving.after_update(result);
    return answer(std::move(result));
  };
  if (m == "PUT") {
    auto body = parse_object(request.body);
    if (!body) return fail(Status::bad_request(body.error().message));
    return updated(store.update(type, ns, path.name, std::move(*body), path.subresource));
  }
  if (m == "PATCH") {
    auto patch_type = patch_type_from_content_type(header(request, "Content-Type"));
    if (!patch_type) return fail(unsupported_media_type());
    auto patch = json::parse(request.body, nullptr, false);
    if (patch.is_discarded()) return fail(Status::bad_request("the patch is not valid JSON"));
    return updated(store.patch(type, ns, path.name, *patch_type, patch, path.subresource));
  }
  if (m == "DELETE") {
    auto preconditions = delete_preconditions(request.body);
    if (!preconditions) return fail(Status::bad_request(preconditions.error().message));
    return answer(store.remove(type, ns, path.name, *preconditions));
  }
  return fail(Status::method_not_allowed(m, type.group_resource()));
}

HttpResponse openapi_v3(const std::vector<std::string>& s, const std::vector<ResourceType>& types,
                        const std::vector<std::pair<std::string, std::vector<std::string>>>& groups) {
  if (s.size() < 2 || s[1] != "v3") return status_response(Status::not_found_resource());
  std::vector<std::string> served{"api/v1"};
  for (const auto& [g, versions] : groups)
    for (const auto& gv : versions) served.push_back("apis/" + gv);
  if (s.size() == 2) {
    json paths = json::object();
    for (const auto& p : served) paths[p] = {{"serverRelativeURL", "/openapi/v3/" + p + "?hash=sim"}};
    return json_response(json{{"paths", paths}}.dump());
  }
  std::string wanted;
  for (std::size_t i = 2; i < s.size(); ++i) wanted += (i > 2 ? "/" : "") + s[i];
  if (std::find(served.begin(), served.end(), wanted) == served.end())
    return status_response(Status::not_found_resource());
  json paths = json::object();
  for (const auto& t : types) {
    std::string prefix = t.group.empty() ? "api/v1" : "apis/" + t.group + "/" + t.version;
    if (prefix != wanted) continue;
    std::string path = "/" + prefix + (t.namespaced ? "/namespaces/{namespace}/" : "/") + t.resource + "/{name}";
    paths[path] = {
        {"patch",
         {{"x-kubernetes-group-version-kind", {{"group", t.group}, {"version", t.version}, {"kind", t.kind}}},
          {"parameters",
           {{{"name", "fieldValidation"}, {"in", "query"}, {"schema", {{"type", "string"}, {"uniqueItems", true}}}}}},
          {"responses", {{"200", {{"description", "OK"}}}}}}}};
  }
  return json_response(
      json{{"openapi", "3.0.0"}, {"info", {{"title", "Kubernetes"}, {"version", "v1.31.0"}}}, {"paths", paths}}.dump());
}

}  // namespace fedmetrics::sim::detail

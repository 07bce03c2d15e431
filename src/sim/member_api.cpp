#include "fedmetrics/sim/member_api.hpp"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/auth/request_attributes.hpp"
#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/k8s/url.hpp"
#include "fedmetrics/transport/gzip.hpp"
#include "sim/http_util.hpp"
#include "sim/member_responder.hpp"
#include "sim/table_json.hpp"

namespace fedmetrics::sim {

using detail::status_response;
using detail::text_response;
using k8s::Status;
using nlohmann::json;
using transport::HttpRequest;
using transport::HttpResponse;

namespace detail {

json resource_list_json(const k8s::ResourceList& list) {
  json out = json::object();
  for (const auto& [k, v] : list) out[k] = v.to_string();
  return out;
}

json labels_json(const k8s::Labels& labels) {
  json out = json::object();
  for (const auto& [k, v] : labels) out[k] = v;
  return out;
}

HttpResponse MemberResponder::route() const {
  const auto& s = t_.segments;
  if (s.empty()) return not_found();
  if (s[0] == "version" && s.size() == 1) return version();
  if (s[0] == "api") return core();
  if (s[0] == "apis") return apis();
  return not_found();
}

HttpResponse MemberResponder::not_found() { return status_response(Status::not_found_resource()); }

k8s::Labels MemberResponder::pod_labels(const SimPod& p) const {
  k8s::Labels labels = f_.world.workloads[p.workload].labels;
  labels["pod-template-hash"] = p.template_hash;
  return labels;
}

std::optional<HttpResponse> MemberResponder::selectors(k8s::LabelSelector& labels, k8s::FieldSelector& fields,
                                                       const std::vector<std::string_view>* core_fields) const {
  auto l = k8s::LabelSelector::parse(k8s::query_value(t_.query, "labelSelector"));
  if (!l) return status_response(Status::bad_request(l.error().message));
  labels = std::move(*l);
  auto text = k8s::query_value(t_.query, "fieldSelector");
  auto fs =
      core_fields != nullptr ? k8s::FieldSelector::parse_for(text, *core_fields) : k8s::FieldSelector::parse(text);
  if (!fs) return status_response(Status::bad_request(fs.error().message));
  fields = std::move(*fs);
  return std::nullopt;
}

std::vector<const SimPod*> MemberResponder::pods(std::string_view ns) const {
  std::vector<const SimPod*> out;
  for (const auto& p : state_.pods) {
    if (!f_.exists(p, now_)) continue;
    if (!ns.empty() && f_.world.workloads[p.workload].namespace_name != ns) continue;
    out.push_back(&p);
  }
  std::sort(out.begin(), out.end(), [&](const SimPod* a, const SimPod* b) {
    const auto& na = f_.world.workloads[a->workload].namespace_name;
    const auto& nb = f_.world.workloads[b->workload].namespace_name;
    return na != nb ? na < nb : a->name < b->name;
  });
  return out;
}

const SimPod* MemberResponder::find_pod(std::string_view ns, std::string_view name) const {
  for (const auto* p : pods(ns))
    if (p->name == name) return p;
  return nullptr;
}

PodUsage MemberResponder::usage_of(const SimPod& p) const {
  if (!shares_) shares_ = f_.load_shares(now_);
  return f_.usage(m_, p, now_, *shares_);
}

}  // namespace detail

bool member_authenticated(const Federation& f, std::size_t member, const HttpRequest& request) {
  if (f.members[member].faults.expired_token) return false;
  // apiserver's bearer-token authenticator: "Bearer <token>", scheme case-insensitive.
  auto value = detail::header(request, "Authorization");
  auto space = value.find(' ');
  if (space == std::string_view::npos) return false;
  auto scheme = value.substr(0, space);
  auto token = value.substr(space + 1);
  if (!k8s::iequals(scheme, "bearer") || token.empty() || token.find(' ') != std::string_view::npos) return false;
  const auto& name = f.world.members[member].name;
  for (const auto& u : f.world.users) {
    if (u.token != token) continue;
    if (u.members.empty() || std::find(u.members.begin(), u.members.end(), name) != u.members.end()) return true;
  }
  return false;
}

HttpResponse MemberApi::handle(const HttpRequest& request, k8s::Timestamp now, double fault_draw) const {
  const auto& faults = federation_.members[member_].faults;
  auto decoded = k8s::parse_request_target(request.target);
  if (!decoded) return status_response(Status::bad_request("invalid URL escape in the request path"));
  const auto& target = *decoded;
  const auto& s = target.segments;
  // Health endpoints are open to anyone (apiserver's AlwaysAllowPaths), as kubelet probes send no credentials.
  if (s.size() == 1 && (s[0] == "healthz" || s[0] == "livez" || s[0] == "readyz")) {
    // A member failing its requests (errorRate) fails readiness as often, with
    // kube-apiserver's verbose-less wording.
    if (s[0] == "readyz" && fault_draw < faults.error_rate) {
      return text_response("[-]simulated-fault failed: reason withheld\nreadyz check failed\n", 500);
    }
    return text_response("ok");
  }
  if (!member_authenticated(federation_, member_, request)) return status_response(Status::unauthorized());
  if (fault_draw < faults.error_rate) return status_response(Status::internal_error("simulated fault"));

  // What the request asks, as the authorizer reads it, for the 405 of what a member does not serve.
  auto attributes = auth::request_attributes(request.method, target);
  if (!attributes) return status_response(Status::not_found_resource());
  const k8s::GroupResource named{attributes->api_group, attributes->resource};
  bool read = request.method == "GET" || request.method == "HEAD";
  HttpResponse response;
  if (!read) {
    response = status_response(Status::method_not_allowed(attributes->verb, named));
  } else if (k8s::query_bool(target.query, "watch")) {
    response = status_response(Status::method_not_allowed("watch", named));
  } else {
    response = detail::MemberResponder(federation_, member_, target, now).route();
    // kubectl get asks for a Table (Accept: application/json;as=Table;v=v1;g=meta.k8s.io,...).
    auto table = detail::table_request(request, target);
    bool built_in = !s.empty() && (s[0] == "api" || (s[0] == "apis" && s.size() > 3 && s[1] == "apps"));
    if (!table) {
      response = status_response(Status::bad_request(table.error().message));
    } else if (*table && response.status == 200 && built_in) {
      auto doc = json::parse(response.body, nullptr, false);
      if (auto t = detail::member_table(doc, now)) {
        detail::complete_table(*t, doc, **table);
        response.body = t->dump();
      }
    }
  }
  if (faults.malformed_json && response.status == 200 && response.content_type == "application/json") {
    // Cut mid-document: a body that no JSON parser accepts.
    response.body = response.body.substr(0, response.body.size() / 2);
  }
  if (faults.malformed_gzip && response.status == 200 &&
      transport::accepts_gzip(detail::header(request, "Accept-Encoding"))) {
    // Compressed whatever its size, then the CRC-32 (the trailer's first four
    // bytes, RFC 1952) broken: every byte inflates to the right answer and
    // only a decoder that checks the trailer, as Go's gzip.Reader does, fails.
    // The listener leaves a body that has a Content-Encoding alone.
    std::string gzipped = transport::gzip_compress(response.body);
    gzipped[gzipped.size() - 8] = static_cast<char>(gzipped[gzipped.size() - 8] ^ 0xff);
    response.body = std::move(gzipped);
    response.headers.emplace_back("Content-Encoding", "gzip");
    response.headers.emplace_back("Vary", "Accept-Encoding");
  }
  return response;
}

}  // namespace fedmetrics::sim
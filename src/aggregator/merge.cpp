#include "aggregator/merge.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <type_traits>
#include <utility>

#include "fedmetrics/k8s/status_reason.hpp"

namespace fedmetrics::aggregator {

bool wanted(const ResourceMetricsQuery& query, std::string_view namespace_name, std::string_view name) {
  const bool pods = query.kind == ResourceMetricsQuery::Kind::Pods;
  if (pods && !query.namespace_name.empty() && namespace_name != query.namespace_name) return false;
  return query.name.empty() ? query.field_selector.matches(name, namespace_name) : name == query.name;
}

namespace {

k8s::Status unknown_while_members_failed(const k8s::GroupResource& what, const std::string& name,
                                         const std::vector<std::string>& failures);

// A warning travels in an HTTP header; member messages can quote whole bodies.
constexpr std::size_t kMaxWarningBytes = 512;

// The distinct members among `clusters` (already sorted), comma separated.
std::string join_distinct(const std::vector<std::string>& clusters, std::size_t* count) {
  std::string out;
  std::set<std::string_view> seen;
  for (const std::string& c : clusters) {
    if (!seen.insert(c).second) continue;
    if (!out.empty()) out += ", ";
    out += c;
  }
  *count = seen.size();
  return out;
}

k8s::Status several_members(const k8s::GroupResource& what, std::string_view name, const std::string& clusters,
                            std::size_t count) {
  return k8s::Status::conflict(what, name,
                               "the object exists in " + std::to_string(count) + " member clusters (" + clusters +
                                   "); choose one with labelSelector " + std::string(kClusterLabel) + "=<member>");
}

const std::string& from_cluster(const k8s::ObjectMeta& meta) {
  static const std::string none;
  auto it = meta.annotations.find(kQueryFromClusterAnnotation);
  return it == meta.annotations.end() ? none : it->second;
}

// Pods and nodes share everything but their identity, their encoding and
// their not-found text.
std::string encode_item(const k8s::PodMetrics& pod) { return k8s::encode_pod_metrics_item(pod); }
std::string encode_item(const k8s::NodeMetrics& node) { return k8s::encode_node_metrics_item(node); }
template <class Item>
std::string assemble_list(const std::vector<const std::string*>& encoded) {
  if constexpr (std::is_same_v<Item, k8s::PodMetrics>) return k8s::assemble_pod_metrics_list(encoded);
  else return k8s::assemble_node_metrics_list(encoded);
}

template <class Item>
PreparedItems<Item> prepare_resource_metrics(std::string_view cluster, std::vector<Item> list,
                                             const ResourceMetricsQuery& query) {
  const bool get = !query.name.empty();
  PreparedItems<Item> out;
  out.items.reserve(list.size());
  for (Item& item : list) {
    const k8s::ObjectMeta& meta = item.metadata;
    // The members were asked with these selectors already; checking name and
    // namespace again is cheap and keeps a member that ignores them from
    // leaking objects into the answer (docs/design/member-identity.md).
    // Labels are not re-checked: an older metrics-server sends no pod labels.
    if (!wanted(query, meta.namespace_name, meta.name)) continue;
    item.metadata.annotations[std::string(kQueryFromClusterAnnotation)] = std::string(cluster);
    out.items.push_back(std::move(item));
  }
  // A get by name answers one object, written with its kind: not from these.
  if (!get && query.encode_list) {
    out.encoded.reserve(out.items.size());
    for (const Item& item : out.items) out.encoded.push_back(encode_item(item));
  }
  return out;
}

template <class Item>
Answer<std::vector<Item>> merge_resource_metrics(std::vector<MemberAnswer<PreparedItems<Item>>> answers,
                                                 const ResourceMetricsQuery& query) {
  Gathered<PreparedItems<Item>> g = gather(std::move(answers), kMetricsGroup);
  if (g.all_failed) return {*g.all_failed, {}};
  const bool get = !query.name.empty();
  const bool pods = query.kind == ResourceMetricsQuery::Kind::Pods;

  // metrics-server sorts by namespace then name; the member breaks ties. The
  // members are in name order already (gather), so a stable sort on
  // namespace and name keeps that order among equals. Positions are sorted,
  // not the items, which then move once.
  struct Position {
    std::size_t member;
    std::size_t item;
  };
  std::vector<Position> order;
  for (std::size_t m = 0; m < g.answered.size(); ++m)
    for (std::size_t i = 0; i < g.answered[m].second.items.size(); ++i) order.push_back({m, i});
  const auto item_at = [&g](const Position& p) -> const Item& { return g.answered[p.member].second.items[p.item]; };
  std::stable_sort(order.begin(), order.end(), [&item_at](const Position& a, const Position& b) {
    const k8s::ObjectMeta& x = item_at(a).metadata;
    const k8s::ObjectMeta& y = item_at(b).metadata;
    return std::tie(x.namespace_name, x.name) < std::tie(y.namespace_name, y.name);
  });

  // Every member's items encoded (a list query that asked): the list is joined from them.
  bool all_encoded = !get && query.encode_list;
  for (const auto& answered : g.answered)
    all_encoded = all_encoded && answered.second.encoded.size() == answered.second.items.size();
  std::optional<std::string> list_json;
  if (all_encoded) {
    std::vector<const std::string*> encoded;
    encoded.reserve(order.size());
    for (const Position& p : order) encoded.push_back(&g.answered[p.member].second.encoded[p.item]);
    list_json = assemble_list<Item>(encoded);
  }

  std::vector<Item> items;
  items.reserve(order.size());
  for (const Position& p : order) items.push_back(std::move(g.answered[p.member].second.items[p.item]));
  if (!get) {
    Answer<std::vector<Item>> answer{std::move(items), std::move(g.warnings)};
    if (list_json) answer.encodings->put(EncodingMemo::kListJson, std::move(*list_json));
    return answer;
  }

  // metrics-server's texts: podmetrics "{ns}/{name}", nodemetrics "{name}".
  const k8s::GroupResource what{std::string(kMetricsGroup), pods ? "podmetrics" : "nodemetrics"};
  const std::string name = pods ? query.namespace_name + "/" + query.name : query.name;
  if (items.empty()) {
    // A member that failed may hold it: not found would be a wrong answer.
    if (!g.warnings.empty()) return {unknown_while_members_failed(what, name, g.warnings), std::move(g.warnings)};
    return {k8s::Status::not_found(what, name), std::move(g.warnings)};
  }
  std::vector<std::string> clusters;
  for (const Item& item : items) clusters.push_back(from_cluster(item.metadata));
  std::size_t count = 0;
  const std::string listed = join_distinct(clusters, &count);
  if (count > 1) return {several_members(what, name, listed, count), std::move(g.warnings)};
  items.resize(1);
  return {std::move(items), std::move(g.warnings)};
}

// merge_pod_metrics and merge_node_metrics: every member prepared here.
template <class Item>
std::vector<MemberAnswer<PreparedItems<Item>>> prepare_all(std::vector<MemberAnswer<std::vector<Item>>> answers,
                                                           const ResourceMetricsQuery& query) {
  std::vector<MemberAnswer<PreparedItems<Item>>> out;
  out.reserve(answers.size());
  for (auto& a : answers) {
    if (a.result.ok()) {
      out.push_back({a.cluster, prepare_resource_metrics(a.cluster, std::move(*a.result), query)});
    } else {
      out.push_back({std::move(a.cluster), a.result.error()});
    }
  }
  return out;
}

// 503 for a get by name that found nothing while some members failed.
k8s::Status unknown_while_members_failed(const k8s::GroupResource& what, const std::string& name,
                                         const std::vector<std::string>& failures) {
  std::string message =
      what.to_string() + " \"" + name + "\" was not found in the member clusters that answered, and these did not: ";
  for (std::size_t i = 0; i < failures.size(); ++i) message += (i ? "; " : "") + failures[i];
  return k8s::Status::service_unavailable(message);
}

// prometheus-adapter forces these to namespaced=false (series_registry.go).
bool root_scoped_parent(std::string_view parent) {
  return parent == "namespaces" || parent == "nodes" || parent == "persistentvolumes";
}

}  // namespace

PodMetricsAnswer merge_pod_metrics(std::vector<MemberAnswer<std::vector<k8s::PodMetrics>>> answers,
                                   const ResourceMetricsQuery& query) {
  return merge_resource_metrics(prepare_all(std::move(answers), query), query);
}

NodeMetricsAnswer merge_node_metrics(std::vector<MemberAnswer<std::vector<k8s::NodeMetrics>>> answers,
                                     const ResourceMetricsQuery& query) {
  return merge_resource_metrics(prepare_all(std::move(answers), query), query);
}

PreparedItems<k8s::PodMetrics> prepare_pod_metrics(std::string_view cluster, std::vector<k8s::PodMetrics> items,
                                                   const ResourceMetricsQuery& query) {
  return prepare_resource_metrics(cluster, std::move(items), query);
}

PreparedItems<k8s::NodeMetrics> prepare_node_metrics(std::string_view cluster, std::vector<k8s::NodeMetrics> items,
                                                     const ResourceMetricsQuery& query) {
  return prepare_resource_metrics(cluster, std::move(items), query);
}

PodMetricsAnswer merge_prepared_pod_metrics(std::vector<MemberAnswer<PreparedItems<k8s::PodMetrics>>> answers,
                                            const ResourceMetricsQuery& query) {
  return merge_resource_metrics(std::move(answers), query);
}

NodeMetricsAnswer merge_prepared_node_metrics(std::vector<MemberAnswer<PreparedItems<k8s::NodeMetrics>>> answers,
                                              const ResourceMetricsQuery& query) {
  return merge_resource_metrics(std::move(answers), query);
}

CustomMetricsAnswer merge_custom_metrics(std::vector<MemberAnswer<std::vector<k8s::MetricValue>>> answers,
                                         const CustomMetricsQuery& query) {
  auto g = gather(std::move(answers), kCustomGroup);
  if (g.all_failed) return {*g.all_failed, {}};
  const bool pods_query = query.resource.group.empty() && query.resource.resource == "pods";

  struct Entry {
    k8s::MetricValue value;
    std::string cluster;  // for per-pod items; empty for summed ones
  };
  std::vector<Entry> entries;
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> summed;  // (kind, ns, name) -> entry
  for (auto& [cluster, list] : g.answered) {
    for (k8s::MetricValue& v : list) {
      const k8s::ObjectReference& o = v.described_object;
      // A pod is one object in one member: summing same-named pods of two
      // members (Karmada keys by name only) doubles one and hides the other.
      if (pods_query || o.kind == "Pod") {
        entries.push_back({std::move(v), cluster});
        continue;
      }
      auto [it, inserted] = summed.try_emplace({o.kind, o.namespace_name, o.name}, entries.size());
      if (inserted) {
        entries.push_back({std::move(v), {}});
        continue;
      }
      k8s::MetricValue& into = entries[it->second].value;
      // Go's Quantity.Add: the sum keeps the first (non-zero) operand's format.
      auto sum = into.value.plus(v.value);
      if (!sum)
        return {k8s::Status::internal_error("summing " + query.metric + " of " + o.name + ": " + sum.error().message),
                std::move(g.warnings)};
      into.value = *sum;
      into.timestamp = std::max(into.timestamp, v.timestamp);
      if (v.window_seconds && (!into.window_seconds || *v.window_seconds > *into.window_seconds))
        into.window_seconds = v.window_seconds;
    }
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    const auto& x = a.value.described_object;
    const auto& y = b.value.described_object;
    return std::tie(x.namespace_name, x.name, x.kind, a.cluster) <
           std::tie(y.namespace_name, y.name, y.kind, b.cluster);
  });

  if (!query.wildcard()) {
    // The HPA wants exactly one item for a named object (k8s.io/metrics
    // pkg/client/custom_metrics refuses any other count).
    if (entries.empty() && !g.warnings.empty())
      return {unknown_while_members_failed(query.resource, query.name, g.warnings), std::move(g.warnings)};
    if (entries.empty())
      return {k8s::Status::metric_not_found(query.metric, query.resource, query.name), std::move(g.warnings)};
    std::vector<std::string> clusters;
    for (const Entry& e : entries)
      if (!e.cluster.empty()) clusters.push_back(e.cluster);
    std::size_t count = 0;
    const std::string listed = join_distinct(clusters, &count);
    if (count > 1) return {several_members(query.resource, query.name, listed, count), std::move(g.warnings)};
  }
  std::vector<k8s::MetricValue> items;
  items.reserve(entries.size());
  for (Entry& e : entries) items.push_back(std::move(e.value));
  return {std::move(items), std::move(g.warnings)};
}

ExternalMetricsAnswer merge_external_metrics(std::vector<MemberAnswer<std::vector<k8s::ExternalMetricValue>>> answers,
                                             const ExternalMetricsQuery& /*query*/) {
  auto g = gather(std::move(answers), kExternalGroup);
  if (g.all_failed) return {*g.all_failed, {}};
  std::vector<k8s::ExternalMetricValue> items;
  for (auto& [cluster, list] : g.answered) {
    for (k8s::ExternalMetricValue& v : list) {
      // Ours wins over a member's own label of the same key: it must say
      // where the series came from.
      v.metric_labels[std::string(kClusterLabel)] = cluster;
      items.push_back(std::move(v));
    }
  }
  return {std::move(items), std::move(g.warnings)};
}

bool is_client_error(const MemberError& error) {
  if (error.kind != MemberError::Kind::HttpStatus) return false;
  const int code = error.http_status;
  return code >= 400 && code < 500 && code != 401 && code != 403 && code != 404 && code != 408 && code != 429;
}

std::optional<k8s::Status> common_client_error(const std::vector<const MemberError*>& asked) {
  if (asked.empty()) return std::nullopt;
  const int code = asked.front()->http_status;
  for (const MemberError* e : asked)
    if (!is_client_error(*e) || e->http_status != code) return std::nullopt;
  // The member's own Status says best what is wrong with the request.
  for (const MemberError* e : asked)
    if (e->status && e->status->code == code) return *e->status;
  k8s::Status status;
  status.code = code;
  status.reason = std::string(k8s::reason_for_code(code));
  status.message = "every member cluster refused the request as forwarded to it: " + asked.front()->message;
  return status;
}

std::string member_warning(std::string_view cluster, const MemberError& error) {
  // "left out" in words, as the issue and the README show it; to_string's
  // snake_case word is for labels.
  std::string text = std::string(cluster) + ": ";
  std::string_view message = error.message;
  if (message.empty() && error.status) message = error.status->message;
  if (error.kind == MemberError::Kind::HttpStatus && error.http_status != 0) {
    // The status in the words a person reads it in, once: the member client's
    // message already starts with it ("HTTP 500: Internal error occurred").
    const std::string code = "HTTP " + std::to_string(error.http_status);
    text += code;
    if (message.substr(0, code.size()) == code) {
      message.remove_prefix(code.size());
      if (message.substr(0, 2) == ": ") message.remove_prefix(2);
    }
  } else {
    text += error.kind == MemberError::Kind::LeftOut ? "left out" : to_string(error.kind);
  }
  if (!message.empty()) text += ": " + std::string(message);

  for (char& c : text) {
    if (c == '"') c = '\'';
    else if (c == '\\') c = '/';
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  if (text.size() > kMaxWarningBytes) {
    std::size_t cut = kMaxWarningBytes;
    // Never cut inside a UTF-8 sequence: back up over continuation bytes.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text.resize(cut);
    text += "...";
  }
  return text;
}

// ---------------------------------------------------------------------------

k8s::APIResourceList merge_custom_metric_resources(
    const std::vector<std::shared_ptr<const MemberCapabilities>>& members, k8s::CustomMetricsVersion version) {
  std::map<std::string, k8s::APIResource> by_name;
  std::map<std::string, bool, std::less<>> parent_namespaced;
  for (const auto& caps : members) {
    if (!caps) continue;
    for (const k8s::APIResource& r : caps->custom_metric_resources) {
      const std::string parent = r.name.substr(0, r.name.find('/'));
      parent_namespaced[parent] = parent_namespaced[parent] || r.namespaced;
      by_name.try_emplace(r.name, k8s::APIResource{r.name, "", false, "MetricValueList", {"get"}});
    }
  }
  k8s::APIResourceList out{std::string(k8s::group_version(version)), {}};
  for (auto& [name, r] : by_name) {
    const std::string parent = name.substr(0, name.find('/'));
    r.namespaced = !root_scoped_parent(parent) && parent_namespaced[parent];
    out.resources.push_back(std::move(r));
  }
  return out;
}

k8s::APIResourceList merge_external_metric_resources(
    const std::vector<std::shared_ptr<const MemberCapabilities>>& members) {
  std::set<std::string> names;
  for (const auto& caps : members) {
    if (!caps) continue;
    for (const k8s::APIResource& r : caps->external_metric_resources) names.insert(r.name);
  }
  k8s::APIResourceList out{std::string(k8s::kExternalMetricsGroupVersion), {}};
  for (const std::string& name : names)
    out.resources.push_back(k8s::APIResource{name, "", true, "ExternalMetricValueList", {"get"}});
  return out;
}
}  // namespace fedmetrics::aggregator

// Which members a query goes to and what they are asked (plan.hpp): the
// fedmetrics/cluster selector, the members' capabilities, the left-out
// members; and the canonical text of a query.
#include "aggregator/plan.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "aggregator/merge.hpp"

namespace fedmetrics::aggregator {
namespace {

// Separates the parts of a query key; no path segment or selector holds it.
constexpr char kKeySeparator = '\x1f';

std::string escape_field_value(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == ',' || c == '=') out += '\\';
    out += c;
  }
  return out;
}

bool lists(const std::vector<k8s::APIResource>& resources, std::string_view name) {
  return std::any_of(resources.begin(), resources.end(), [&](const k8s::APIResource& r) { return r.name == name; });
}

}  // namespace

MemberError left_out_error(std::string_view reason) {
  return MemberError{MemberError::Kind::LeftOut, std::string(reason), 0, std::nullopt};
}

namespace {

// 503 for a metric no asked member has while some chosen member was not
// asked: it may have the metric, so 404 would be a guess that tells an HPA
// the metric does not exist.
k8s::Status maybe_in_unasked(const std::vector<LeftOutMember>& unasked, const std::string& what) {
  std::string names;
  for (const LeftOutMember& m : unasked)
    names += (names.empty() ? "" : "; ") + member_warning(m.name, left_out_error(m.reason));
  return k8s::Status::service_unavailable("no member cluster asked has the metric " + what +
                                          ", and these could not be asked: " + names);
}

bool named(const std::vector<LeftOutMember>& left_out, std::string_view name) {
  return std::any_of(left_out.begin(), left_out.end(), [&](const LeftOutMember& m) { return m.name == name; });
}

// The left-out members `chosen` accepts, in the source's order.
template <class Chosen>
std::vector<LeftOutMember> chosen_left_out(const std::vector<LeftOutMember>& left_out, Chosen chosen) {
  std::vector<LeftOutMember> out;
  for (const LeftOutMember& m : left_out)
    if (chosen(m.name)) out.push_back(m);
  return out;
}

// Custom and external metrics are named per member, so only a member's
// discovery says whether to ask it: a chosen member is asked when it lists
// the metric, and unasked while its discovery has not succeeded (it may well
// have it), as are the chosen left-out members. Whether any member lists the
// metric; when none does and some chosen member was not asked, the plan's
// early answer is the 503 naming them (`what`: the metric asked).
template <class Q, class Chosen, class Lists>
bool route_by_discovery(Plan<Q>& plan, const MemberList& members, const std::vector<LeftOutMember>& left_out,
                        Chosen chosen_name, Lists lists_metric, const std::string& what) {
  bool any_knows = false;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const MemberCluster& member = *members[i];
    const bool chosen = chosen_name(member.name());
    auto caps = member.capabilities();
    if (!caps) {
      if (chosen) plan.unasked.push_back({member.name(), std::string(kUndiscoveredReason)});
      continue;
    }
    if (!lists_metric(*caps)) continue;
    any_knows = true;
    if (chosen) plan.members.push_back(i);
  }
  for (LeftOutMember& m : chosen_left_out(left_out, chosen_name)) plan.unasked.push_back(std::move(m));
  if (!any_knows && !plan.unasked.empty()) {
    plan.early = maybe_in_unasked(plan.unasked, what);
    plan.unasked.clear();
  }
  return any_knows;
}

}  // namespace

std::vector<std::string> unknown_member_warnings(std::initializer_list<const k8s::LabelSelector*> selectors,
                                                 const MemberList& members,
                                                 const std::vector<LeftOutMember>& left_out) {
  using Op = k8s::SelectorOperator;
  std::vector<std::string> out;
  for (const k8s::LabelSelector* clusters : selectors) {
    for (const k8s::Requirement& r : clusters->requirements()) {
      if (r.op != Op::Equals && r.op != Op::DoubleEquals && r.op != Op::In) continue;
      for (const std::string& name : r.values) {
        const bool known = named(left_out, name) || std::any_of(members.begin(), members.end(),
                                                                [&](const auto& m) { return m->name() == name; });
        const std::string text = std::string(kClusterLabel) + ": no member cluster is named '" + name + "'";
        if (!known && std::find(out.begin(), out.end(), text) == out.end()) out.push_back(text);
      }
    }
  }
  return out;
}

ClusterSplit split_cluster_selector(const k8s::LabelSelector& selector) {
  auto [clusters, forwarded] = selector.partition(kClusterLabel);
  return {std::move(clusters), std::move(forwarded)};
}

bool cluster_selected(const k8s::LabelSelector& clusters, std::string_view member) {
  if (clusters.empty()) return true;
  const k8s::Labels labels{{std::string(kClusterLabel), std::string(member)}};
  return clusters.matches(labels);
}

Plan<ResourceMetricsQuery> plan_resource_metrics(const MemberList& members, const ResourceMetricsQuery& query,
                                                 const std::vector<LeftOutMember>& left_out) {
  Plan<ResourceMetricsQuery> plan;
  ClusterSplit split = split_cluster_selector(query.label_selector);
  plan.warnings = unknown_member_warnings({&split.clusters}, members, left_out);
  plan.forwarded = query;
  if (query.name.empty()) {
    plan.forwarded.label_selector = std::move(split.forwarded);
  } else {
    // A Kubernetes get ignores selectors; the member interface has no get, so
    // ask for a list of the one name. Only fedmetrics/cluster is honoured (it
    // is how a client picks one of several same-named objects).
    plan.forwarded.label_selector = {};
    auto fields = k8s::FieldSelector::parse("metadata.name=" + escape_field_value(query.name));
    if (!fields) {
      plan.early = k8s::Status::bad_request(fields.error().message);
      return plan;
    }
    plan.forwarded.field_selector = std::move(*fields);
  }
  bool any_serves = false;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const MemberCluster& member = *members[i];
    // Unknown capabilities (discovery has not succeeded yet, e.g. just after
    // start-up) mean "ask anyway": nearly every cluster runs metrics-server,
    // and a member that does not serve the API fails fast and shows up as a
    // warning, whereas skipping it would silently drop its pods and nodes.
    // Custom and external metrics are named per member, so there the
    // capability list is the only way to know whom to ask.
    auto caps = member.capabilities();
    if (caps && !caps->resource_metrics) continue;
    any_serves = true;
    if (cluster_selected(split.clusters, member.name())) plan.members.push_back(i);
  }
  // Left-out members may well serve the API (their capabilities are not
  // known here): each is reported, and with nobody asked the merge answers
  // 503 naming them.
  plan.unasked =
      chosen_left_out(left_out, [&](std::string_view name) { return cluster_selected(split.clusters, name); });
  if (!any_serves && plan.unasked.empty()) {
    plan.members.clear();
    plan.early = k8s::Status::service_unavailable("no member cluster serves " + std::string(kMetricsGroup));
  }
  return plan;
}

Plan<CustomMetricsQuery> plan_custom_metrics(const MemberList& members, const CustomMetricsQuery& query,
                                             const std::vector<LeftOutMember>& left_out) {
  Plan<CustomMetricsQuery> plan;
  ClusterSplit objects = split_cluster_selector(query.label_selector);
  ClusterSplit series = split_cluster_selector(query.metric_selector);
  plan.warnings = unknown_member_warnings({&objects.clusters, &series.clusters}, members, left_out);
  const auto chosen_name = [&](std::string_view name) {
    return cluster_selected(objects.clusters, name) && cluster_selected(series.clusters, name);
  };
  plan.forwarded = query;
  plan.forwarded.label_selector = std::move(objects.forwarded);
  plan.forwarded.metric_selector = std::move(series.forwarded);
  const std::string resource = query.resource.to_string() + "/" + query.metric;
  const bool any_knows = route_by_discovery(
      plan, members, left_out, chosen_name,
      [&](const MemberCapabilities& caps) { return lists(caps.custom_metric_resources, resource); },
      resource + " (" + std::string(kCustomGroup) + ")");
  if (!any_knows && !plan.early) {
    plan.early = k8s::Status::metric_not_found(query.metric, query.resource, query.wildcard() ? "" : query.name);
  }
  return plan;
}

Plan<ExternalMetricsQuery> plan_external_metrics(const MemberList& members, const ExternalMetricsQuery& query,
                                                 const std::vector<LeftOutMember>& left_out) {
  Plan<ExternalMetricsQuery> plan;
  ClusterSplit series = split_cluster_selector(query.metric_selector);
  plan.warnings = unknown_member_warnings({&series.clusters}, members, left_out);
  const auto chosen_name = [&](std::string_view name) { return cluster_selected(series.clusters, name); };
  plan.forwarded = query;
  plan.forwarded.metric_selector = std::move(series.forwarded);
  const bool any_knows = route_by_discovery(
      plan, members, left_out, chosen_name,
      [&](const MemberCapabilities& caps) { return lists(caps.external_metric_resources, query.metric); },
      query.metric + " (" + std::string(kExternalGroup) + ")");
  if (!any_knows && !plan.early) {
    // custom-metrics-apiserver has no dedicated external wording and adapters
    // differ (prometheus-adapter says "for namespaces", others leave the
    // resource empty). The custom-metrics sentence with the pseudo-resource
    // "externalmetrics" names what was asked; clients act on 404/NotFound.
    plan.early = k8s::Status::metric_not_found(query.metric, k8s::GroupResource{"", "externalmetrics"});
  }
  return plan;
}

// ---------------------------------------------------------------------------

namespace {
std::string join_key(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) {
    out += p;
    out += kKeySeparator;
  }
  return out;
}
}  // namespace

std::string query_key(const ResourceMetricsQuery& query) {
  const bool pods = query.kind == ResourceMetricsQuery::Kind::Pods;
  // A pods list asked as JSON is answered without items (merge_encoded_pod_metrics).
  const bool json_only = pods && query.name.empty() && query.encode_list;
  return join_key({pods ? (json_only ? "pods/json" : "pods") : "nodes", query.namespace_name, query.name,
                   query.label_selector.to_string(), query.field_selector.to_string()});
}

std::string query_key(const CustomMetricsQuery& query) {
  return join_key({"custom", query.resource.to_string(), query.namespace_name, query.name, query.metric,
                   query.label_selector.to_string(), query.metric_selector.to_string()});
}

std::string query_key(const ExternalMetricsQuery& query) {
  return join_key({"external", query.namespace_name, query.metric, query.metric_selector.to_string()});
}

}  // namespace fedmetrics::aggregator

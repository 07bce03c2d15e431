// The pure plan and merge rules (src/aggregator/plan.hpp, merge.hpp), one TEST_CASE per rule.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "support/fake_member_cluster.hpp"
#include "aggregator/merge.hpp"
#include "aggregator/plan.hpp"

using namespace fedmetrics;
using namespace fedmetrics::aggregator;
using namespace fedmetrics::aggregator::testing;

namespace {

using Pods = std::vector<k8s::PodMetrics>;
using Nodes = std::vector<k8s::NodeMetrics>;
using Values = std::vector<k8s::MetricValue>;
using Series = std::vector<k8s::ExternalMetricValue>;

template <class T>
MemberAnswer<T> ok(std::string cluster, T items) {
  return MemberAnswer<T>{std::move(cluster), std::move(items)};
}

template <class T>
MemberAnswer<T> failed(std::string cluster, MemberError e) {
  return MemberAnswer<T>{std::move(cluster), std::move(e)};
}

std::string cluster_of(const k8s::ObjectMeta& meta) {
  auto it = meta.annotations.find(kQueryFromClusterAnnotation);
  return it == meta.annotations.end() ? "" : it->second;
}

ResourceMetricsQuery pods_in(std::string ns, std::string name = "") {
  ResourceMetricsQuery q;
  q.kind = ResourceMetricsQuery::Kind::Pods;
  q.namespace_name = std::move(ns);
  q.name = std::move(name);
  return q;
}

ResourceMetricsQuery nodes_named(std::string name = "") {
  ResourceMetricsQuery q;
  q.kind = ResourceMetricsQuery::Kind::Nodes;
  q.name = std::move(name);
  return q;
}

CustomMetricsQuery custom_query(k8s::GroupResource resource, std::string ns, std::string name,
                                std::string metric = "http_requests") {
  CustomMetricsQuery q;
  q.resource = std::move(resource);
  q.namespace_name = std::move(ns);
  q.name = std::move(name);
  q.metric = std::move(metric);
  return q;
}

}  // namespace

TEST_CASE("Aggregator: pod lists are the union of all members, sorted by namespace, name, then member",
          "[aggregator][merge]") {
  std::vector<MemberAnswer<Pods>> answers;
  // Members deliberately out of order, items deliberately unsorted.
  answers.push_back(ok<Pods>("member2", {pod("b", "web-0"), pod("a", "zeta", "20m", {{"app", "z"}})}));
  answers.push_back(ok<Pods>("member1", {pod("b", "web-0", "30m"), pod("a", "alpha")}));
  const auto answer = merge_pod_metrics(std::move(answers), pods_in(""));
  const Pods& items = items_of(answer);

  using Row = std::tuple<std::string, std::string, std::string>;  // namespace, name, member
  std::vector<Row> got;
  for (const auto& p : items) got.emplace_back(p.metadata.namespace_name, p.metadata.name, cluster_of(p.metadata));
  const std::vector<Row> want{
      {"a", "alpha", "member1"}, {"a", "zeta", "member2"}, {"b", "web-0", "member1"}, {"b", "web-0", "member2"}};
  CHECK(got == want);
  CHECK(answer.warnings.empty());
}

TEST_CASE("Aggregator: a list answer comes with its JSON, joined from the items each member's answer encoded",
          "[aggregator][merge]") {
  const auto no_encoding_yet = [] { return std::string("not encoded ahead"); };
  const auto listed = [](ResourceMetricsQuery q) {
    q.encode_list = true;  // as the API server asks
    return q;
  };
  std::vector<MemberAnswer<Pods>> pods;
  pods.push_back(ok<Pods>("member2", {pod("b", "web-0"), pod("a", "zeta", "20m", {{"app", "z"}})}));
  pods.push_back(ok<Pods>("member1", {pod("b", "web-0", "30m"), pod("a", "alpha")}));
  pods.push_back(failed<Pods>("member3", MemberError{MemberError::Kind::Timeout, "no answer", 0, std::nullopt}));
  const auto list = merge_pod_metrics(std::move(pods), listed(pods_in("")));
  REQUIRE(items_of(list).size() == 4);
  CHECK(*list.encodings->get(EncodingMemo::kListJson, no_encoding_yet) == k8s::encode_pod_metrics_list(items_of(list)));

  // In two steps, as the fan-out does it: the same answer.
  std::vector<MemberAnswer<PreparedItems<k8s::PodMetrics>>> prepared;
  prepared.push_back({"member2", prepare_pod_metrics("member2", {pod("b", "web-0")}, listed(pods_in("b")))});
  prepared.push_back(
      {"member1", prepare_pod_metrics("member1", {pod("b", "web-0", "30m"), pod("a", "alpha")}, listed(pods_in("b")))});
  const auto in_b = merge_prepared_pod_metrics(std::move(prepared), listed(pods_in("b")));
  REQUIRE(items_of(in_b).size() == 2);  // a/alpha is not in namespace b
  CHECK(cluster_of(items_of(in_b)[0].metadata) == "member1");
  CHECK(*in_b.encodings->get(EncodingMemo::kListJson, no_encoding_yet) == k8s::encode_pod_metrics_list(items_of(in_b)));

  std::vector<MemberAnswer<Nodes>> nodes;
  nodes.push_back(ok<Nodes>("member2", {node("node-b")}));
  nodes.push_back(ok<Nodes>("member1", {node("node-b"), node("node-a")}));
  const auto node_list = merge_node_metrics(std::move(nodes), listed(nodes_named()));
  CHECK(*node_list.encodings->get(EncodingMemo::kListJson, no_encoding_yet) ==
        k8s::encode_node_metrics_list(items_of(node_list)));

  // A get by name is written as one object, by the server: nothing ahead.
  std::vector<MemberAnswer<Pods>> one;
  one.push_back(ok<Pods>("member1", {pod("b", "web-0")}));
  const auto got = merge_pod_metrics(std::move(one), listed(pods_in("b", "web-0")));
  REQUIRE(items_of(got).size() == 1);
  CHECK(*got.encodings->get(EncodingMemo::kListJson, no_encoding_yet) == "not encoded ahead");

  // Nor for a caller that does not write JSON (the in-process autoscaler).
  std::vector<MemberAnswer<Pods>> unlisted;
  unlisted.push_back(ok<Pods>("member1", {pod("b", "web-0")}));
  const auto in_process = merge_pod_metrics(std::move(unlisted), pods_in("b"));
  REQUIRE(items_of(in_process).size() == 1);
  CHECK(*in_process.encodings->get(EncodingMemo::kListJson, no_encoding_yet) == "not encoded ahead");
}

TEST_CASE("Aggregator: the same namespace/name in two members stays two items with their own values",
          "[aggregator][merge]") {
  std::vector<MemberAnswer<Pods>> answers;
  answers.push_back(ok<Pods>("member1", {pod("default", "web-0", "100m")}));
  answers.push_back(ok<Pods>("member2", {pod("default", "web-0", "300m")}));
  const Pods& items = items_of(merge_pod_metrics(std::move(answers), pods_in("default")));
  REQUIRE(items.size() == 2);
  CHECK(items[0].containers[0].usage.at("cpu").to_string() == "100m");
  CHECK(items[1].containers[0].usage.at("cpu").to_string() == "300m");
  CHECK(cluster_of(items[0].metadata) == "member1");
  CHECK(cluster_of(items[1].metadata) == "member2");
}

TEST_CASE("Aggregator: items keep the pod's labels and carry the query-from-cluster annotation",
          "[aggregator][merge]") {
  std::vector<MemberAnswer<Pods>> answers;
  answers.push_back(ok<Pods>("member3", {pod("default", "web-0", "10m", {{"app", "web"}, {"tier", "api"}})}));
  const Pods& items = items_of(merge_pod_metrics(std::move(answers), pods_in("default")));
  REQUIRE(items.size() == 1);
  CHECK(items[0].metadata.labels == k8s::Labels{{"app", "web"}, {"tier", "api"}});
  CHECK(items[0].metadata.annotations == k8s::Labels{{"resource.karmada.io/query-from-cluster", "member3"}});

  std::vector<MemberAnswer<Nodes>> nodes;
  nodes.push_back(ok<Nodes>("member2", {node("node-b")}));
  nodes.push_back(ok<Nodes>("member1", {node("node-b"), node("node-a")}));
  const Nodes& node_items = items_of(merge_node_metrics(std::move(nodes), nodes_named()));
  REQUIRE(node_items.size() == 3);
  CHECK(node_items[0].metadata.name == "node-a");
  CHECK(cluster_of(node_items[1].metadata) == "member1");
  CHECK(cluster_of(node_items[2].metadata) == "member2");
}

TEST_CASE("Aggregator: a list keeps only items matching the field selector and namespace asked for",
          "[aggregator][merge]") {
  auto q = pods_in("default");
  q.field_selector = *k8s::FieldSelector::parse("metadata.name!=web-1");
  std::vector<MemberAnswer<Pods>> answers;
  answers.push_back(ok<Pods>("member1", {pod("default", "web-0"), pod("default", "web-1"), pod("other", "web-2")}));
  const Pods& items = items_of(merge_pod_metrics(std::move(answers), q));
  REQUIRE(items.size() == 1);
  CHECK(items[0].metadata.name == "web-0");
}

TEST_CASE("Aggregator: get pod by name is the item from one member, 404 from none, 409 from several",
          "[aggregator][merge]") {
  struct Row {
    std::vector<std::string> members_having_it;
    int code;  // 0 = the item
    std::string message;
  };
  const Row rows[] = {
      {{"member2"}, 0, ""},
      {{}, 404, "podmetrics.metrics.k8s.io \"default/web-0\" not found"},
      {{"member1", "member2"},
       409,
       "Operation cannot be fulfilled on podmetrics.metrics.k8s.io \"default/web-0\": the object exists in 2 member "
       "clusters (member1, member2); choose one with labelSelector fedmetrics/cluster=<member>"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.members_having_it.size());
    std::vector<MemberAnswer<Pods>> answers;
    for (std::string m : {"member2", "member1", "member3"}) {
      Pods items;
      if (std::find(row.members_having_it.begin(), row.members_having_it.end(), m) != row.members_having_it.end())
        items.push_back(pod("default", "web-0"));
      answers.push_back(ok<Pods>(m, std::move(items)));
    }
    const auto answer = merge_pod_metrics(std::move(answers), pods_in("default", "web-0"));
    if (row.code == 0) {
      const Pods& items = items_of(answer);
      REQUIRE(items.size() == 1);
      CHECK(cluster_of(items[0].metadata) == "member2");
    } else {
      const k8s::Status& s = status_of(answer);
      CHECK(s.code == row.code);
      CHECK(s.message == row.message);
      if (row.code == 404) {
        // metrics-server's details for "pod exists, no metrics".
        CHECK(s.reason == "NotFound");
        CHECK(s.details.name == "default/web-0");
        CHECK(s.details.group == "metrics.k8s.io");
        CHECK(s.details.kind == "podmetrics");
      } else {
        CHECK(s.reason == "Conflict");
      }
    }
  }
}

TEST_CASE("Aggregator: get node by name is the item from one member, 404 from none, 409 from several",
          "[aggregator][merge]") {
  {
    std::vector<MemberAnswer<Nodes>> answers;
    answers.push_back(ok<Nodes>("member1", {}));
    const auto& s = status_of(merge_node_metrics(std::move(answers), nodes_named("node-1")));
    CHECK(s.code == 404);
    CHECK(s.message == "nodemetrics.metrics.k8s.io \"node-1\" not found");
    CHECK(s.details.kind == "nodemetrics");
  }
  {
    std::vector<MemberAnswer<Nodes>> answers;
    answers.push_back(ok<Nodes>("member1", {node("node-1")}));
    answers.push_back(ok<Nodes>("member2", {}));
    const Nodes& items = items_of(merge_node_metrics(std::move(answers), nodes_named("node-1")));
    REQUIRE(items.size() == 1);
    CHECK(cluster_of(items[0].metadata) == "member1");
  }
  {
    std::vector<MemberAnswer<Nodes>> answers;
    answers.push_back(ok<Nodes>("member2", {node("node-1")}));
    answers.push_back(ok<Nodes>("member1", {node("node-1")}));
    const auto& s = status_of(merge_node_metrics(std::move(answers), nodes_named("node-1")));
    CHECK(s.code == 409);
    CHECK_THAT(s.message, Catch::Contains("(member1, member2)"));
  }
}

TEST_CASE("Aggregator: custom metrics for pods are never summed, whatever their names", "[aggregator][merge]") {
  std::vector<MemberAnswer<Values>> answers;
  answers.push_back(ok<Values>("member2", {metric_value("Pod", "default", "web-0", "3")}));
  answers.push_back(ok<Values>(
      "member1", {metric_value("Pod", "default", "web-0", "1"), metric_value("Pod", "default", "web-1", "2")}));
  const Values& items = items_of(merge_custom_metrics(std::move(answers), custom_query({"", "pods"}, "default", "*")));
  REQUIRE(items.size() == 3);
  // Sorted by namespace, name, then member: web-0 from member1, web-0 from member2, web-1.
  CHECK(items[0].described_object.name == "web-0");
  CHECK(items[0].value.to_string() == "1");
  CHECK(items[1].described_object.name == "web-0");
  CHECK(items[1].value.to_string() == "3");
  CHECK(items[2].described_object.name == "web-1");
}

TEST_CASE("Aggregator: custom metrics of other objects are summed per kind, namespace and name, keeping the format",
          "[aggregator][merge]") {
  struct Row {
    std::string a;
    std::string b;
    std::string sum;
  };
  const Row rows[] = {
      {"500m", "1", "1500m"},
      {"20468Ki", "30000Ki", "50468Ki"},
      {"1", "500m", "1500m"},
      {"0", "2Ki", "2Ki"},  // Go's Add takes the other's format when the first is zero
  };
  for (const Row& row : rows) {
    CAPTURE(row.a, row.b);
    std::vector<MemberAnswer<Values>> answers;
    answers.push_back(ok<Values>("member2", {metric_value("Service", "default", "web", row.b)}));
    answers.push_back(ok<Values>("member1", {metric_value("Service", "default", "web", row.a)}));
    const Values& items =
        items_of(merge_custom_metrics(std::move(answers), custom_query({"", "services"}, "default", "*")));
    REQUIRE(items.size() == 1);
    CHECK(items[0].value.to_string() == row.sum);
  }

  // Only equal (kind, namespace, name) are summed.
  std::vector<MemberAnswer<Values>> answers;
  answers.push_back(ok<Values>(
      "member1", {metric_value("Service", "default", "web", "1"), metric_value("Deployment", "default", "web", "2"),
                  metric_value("Service", "other", "web", "4")}));
  answers.push_back(ok<Values>(
      "member2", {metric_value("Service", "default", "web", "10"), metric_value("Service", "other", "web", "40")}));
  const Values& items =
      items_of(merge_custom_metrics(std::move(answers), custom_query({"", "services"}, "default", "*")));
  REQUIRE(items.size() == 3);
  CHECK(items[0].described_object.kind == "Deployment");
  CHECK(items[0].value.to_string() == "2");
  CHECK(items[1].described_object.kind == "Service");
  CHECK(items[1].described_object.namespace_name == "default");
  CHECK(items[1].value.to_string() == "11");
  CHECK(items[2].described_object.namespace_name == "other");
  CHECK(items[2].value.to_string() == "44");
}

TEST_CASE("Aggregator: a summed custom metric has the newest timestamp and the largest window", "[aggregator][merge]") {
  std::vector<MemberAnswer<Values>> answers;
  answers.push_back(ok<Values>("member1", {metric_value("Namespace", "", "team-a", "1", 10, 30)}));
  answers.push_back(ok<Values>("member2", {metric_value("Namespace", "", "team-a", "2", 50, std::nullopt)}));
  answers.push_back(ok<Values>("member3", {metric_value("Namespace", "", "team-a", "3", 20, 120)}));
  const Values& items =
      items_of(merge_custom_metrics(std::move(answers), custom_query({"", "namespaces"}, "", "team-a")));
  REQUIRE(items.size() == 1);
  CHECK(items[0].value.to_string() == "6");
  CHECK(items[0].timestamp == at_second(50));
  CHECK(items[0].window_seconds == std::optional<std::int64_t>(120));
}

TEST_CASE("Aggregator: a named custom-metric object no member returned is 404, a named pod in two members is 409",
          "[aggregator][merge]") {
  {
    std::vector<MemberAnswer<Values>> answers;
    answers.push_back(ok<Values>("member1", {}));
    const auto& s = status_of(
        merge_custom_metrics(std::move(answers), custom_query({"apps", "deployments"}, "default", "web", "rps")));
    CHECK(s.code == 404);
    CHECK(s.message == "the server could not find the metric rps for deployments.apps web");
  }
  {
    std::vector<MemberAnswer<Values>> answers;
    answers.push_back(ok<Values>("member1", {metric_value("Pod", "default", "web-0", "1")}));
    answers.push_back(ok<Values>("member2", {metric_value("Pod", "default", "web-0", "2")}));
    const auto& s = status_of(merge_custom_metrics(std::move(answers), custom_query({"", "pods"}, "default", "web-0")));
    CHECK(s.code == 409);
    CHECK_THAT(s.message, Catch::Contains("pods \"web-0\"") && Catch::Contains("(member1, member2)"));
  }
  {
    // A named deployment in two members is one summed item, not a conflict.
    std::vector<MemberAnswer<Values>> answers;
    answers.push_back(ok<Values>("member1", {metric_value("Deployment", "default", "web", "1")}));
    answers.push_back(ok<Values>("member2", {metric_value("Deployment", "default", "web", "2")}));
    const Values& items =
        items_of(merge_custom_metrics(std::move(answers), custom_query({"apps", "deployments"}, "default", "web")));
    REQUIRE(items.size() == 1);
    CHECK(items[0].value.to_string() == "3");
  }
}

TEST_CASE("Aggregator: external series of all members are tagged with fedmetrics/cluster", "[aggregator][merge]") {
  std::vector<MemberAnswer<Series>> answers;
  answers.push_back(ok<Series>("member2", {external_value({{"queue", "orders"}}, "5")}));
  answers.push_back(
      ok<Series>("member1", {external_value({{"queue", "orders"}}, "7"),
                             external_value({{"queue", "mail"}, {"fedmetrics/cluster", "spoofed"}}, "1")}));
  const Series& items = items_of(merge_external_metrics(std::move(answers), ExternalMetricsQuery{}));
  REQUIRE(items.size() == 3);
  CHECK(items[0].metric_labels == k8s::Labels{{"fedmetrics/cluster", "member1"}, {"queue", "orders"}});
  CHECK(items[0].value.to_string() == "7");
  CHECK(items[1].metric_labels == k8s::Labels{{"fedmetrics/cluster", "member1"}, {"queue", "mail"}});
  CHECK(items[2].metric_labels == k8s::Labels{{"fedmetrics/cluster", "member2"}, {"queue", "orders"}});
}

TEST_CASE("Aggregator: partial failure keeps the others' answer and warns once per failed member, naming it",
          "[aggregator][merge]") {
  std::vector<MemberAnswer<Pods>> answers;
  answers.push_back(
      failed<Pods>("member3", error(MemberError::Kind::Refused, "dial 10.0.0.3:443: connection refused")));
  answers.push_back(ok<Pods>("member1", {pod("default", "web-0")}));
  answers.push_back(failed<Pods>("member2", error(MemberError::Kind::Timeout, "no answer within 3s")));
  const auto answer = merge_pod_metrics(std::move(answers), pods_in("default"));
  const Pods& items = items_of(answer);
  REQUIRE(items.size() == 1);
  CHECK(answer.warnings == std::vector<std::string>{"member2: timeout: no answer within 3s",
                                                    "member3: refused: dial 10.0.0.3:443: connection refused"});

  std::vector<MemberAnswer<Values>> custom;
  custom.push_back(failed<Values>("member2", error(MemberError::Kind::Tls, "x509: unknown authority")));
  custom.push_back(ok<Values>("member1", {metric_value("Pod", "default", "web-0", "1")}));
  const auto custom_answer = merge_custom_metrics(std::move(custom), custom_query({"", "pods"}, "default", "*"));
  CHECK(items_of(custom_answer).size() == 1);
  CHECK(custom_answer.warnings == std::vector<std::string>{"member2: tls: x509: unknown authority"});
}

TEST_CASE("Aggregator: when every member fails the answer is 503 naming each", "[aggregator][merge]") {
  std::vector<MemberAnswer<Series>> answers;
  answers.push_back(failed<Series>("member2", error(MemberError::Kind::Network, "no such host")));
  answers.push_back(failed<Series>("member1", error(MemberError::Kind::Timeout, "no answer within 3s")));
  const auto answer = merge_external_metrics(std::move(answers), ExternalMetricsQuery{});
  const auto& s = status_of(answer);
  CHECK(s.code == 503);
  CHECK(s.reason == "ServiceUnavailable");
  CHECK(s.message ==
        "no member cluster could serve external.metrics.k8s.io: member1: timeout: no answer within 3s; "
        "member2: network: no such host");
  CHECK(answer.warnings.empty());

  // One member that answered, even with nothing, is not "all failed".
  std::vector<MemberAnswer<Nodes>> nodes;
  nodes.push_back(failed<Nodes>("member1", error(MemberError::Kind::Timeout, "t")));
  nodes.push_back(ok<Nodes>("member2", {}));
  const auto partial = merge_node_metrics(std::move(nodes), nodes_named());
  CHECK(items_of(partial).empty());
  CHECK(partial.warnings.size() == 1);
}

TEST_CASE("Aggregator: warning texts start with the member, then the error kind, and carry no raw double quote",
          "[aggregator][merge]") {
  struct Row {
    MemberError error;
    std::string want;
  };
  MemberError http = error(MemberError::Kind::HttpStatus, "");
  http.http_status = 403;
  http.status = k8s::Status::forbidden("system:anonymous", "list", {"metrics.k8s.io", "pods"}, "", "default", "", "");
  MemberError http_with_message = error(MemberError::Kind::HttpStatus, "GET /apis/x: \"bad\"\r\nX-Injected: 1");
  http_with_message.http_status = 500;
  // As the member client words a status it received: the code, then the Status's message.
  MemberError http_from_member =
      error(MemberError::Kind::HttpStatus, "HTTP 500: Internal error occurred: simulated fault");
  http_from_member.http_status = 500;
  http_from_member.status = k8s::Status::internal_error("simulated fault");
  MemberError http_bare = error(MemberError::Kind::HttpStatus, "HTTP 502");
  http_bare.http_status = 502;
  const Row rows[] = {
      {error(MemberError::Kind::Timeout, "no answer within 3s"), "member2: timeout: no answer within 3s"},
      {error(MemberError::Kind::Refused, "connection refused"), "member2: refused: connection refused"},
      {error(MemberError::Kind::MalformedResponse, "items[0].usage.cpu: \"x\" is not a quantity"),
       "member2: malformed_response: items[0].usage.cpu: 'x' is not a quantity"},
      {error(MemberError::Kind::TooLarge, ""), "member2: too_large"},
      {error(MemberError::Kind::Throttled, "C:\\path"), "member2: throttled: C:/path"},
      {http,
       "member2: HTTP 403: pods.metrics.k8s.io is forbidden: User 'system:anonymous' cannot list resource "
       "'pods' in API group 'metrics.k8s.io' in the namespace 'default'"},
      {http_with_message, "member2: HTTP 500: GET /apis/x: 'bad'  X-Injected: 1"},
      // The status once, not "http_status 500: HTTP 500: ...".
      {http_from_member, "member2: HTTP 500: Internal error occurred: simulated fault"},
      {http_bare, "member2: HTTP 502"},
  };
  for (const Row& row : rows) {
    CHECK(member_warning("member2", row.error) == row.want);
  }
  const std::string long_text = member_warning("member1", error(MemberError::Kind::Network, std::string(5000, 'x')));
  CHECK(long_text.size() <= 520);
  CHECK(long_text.rfind("member1: network: xxx", 0) == 0);
}

TEST_CASE("Aggregator: the fedmetrics/cluster requirement chooses members with every operator", "[aggregator][merge]") {
  struct Row {
    std::string selector;
    std::vector<std::string> chosen;
  };
  const Row rows[] = {
      {"", {"member1", "member2", "member3"}},
      {"fedmetrics/cluster=member1", {"member1"}},
      {"fedmetrics/cluster==member2", {"member2"}},
      {"fedmetrics/cluster!=member1", {"member2", "member3"}},
      {"fedmetrics/cluster in (member1,member3)", {"member1", "member3"}},
      {"fedmetrics/cluster notin (member1,member3)", {"member2"}},
      {"fedmetrics/cluster", {"member1", "member2", "member3"}},
      {"!fedmetrics/cluster", {}},
      {"fedmetrics/cluster=nowhere", {}},
      {"app=web,fedmetrics/cluster=member3", {"member3"}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.selector);
    const ClusterSplit split = split_cluster_selector(selector(row.selector));
    std::vector<std::string> chosen;
    for (std::string m : {"member1", "member2", "member3"})
      if (cluster_selected(split.clusters, m)) chosen.push_back(m);
    CHECK(chosen == row.chosen);
    // The reserved key is never forwarded; other requirements are.
    CHECK(split.forwarded.to_string().find("fedmetrics/cluster") == std::string::npos);
  }
  CHECK(split_cluster_selector(selector("app=web,fedmetrics/cluster=member3")).forwarded.to_string() == "app=web");
}

TEST_CASE("Aggregator: plans ask only members that serve the API, and answer without asking when none does",
          "[aggregator][merge]") {
  auto unknown = std::make_shared<FakeMember>("unknown", nullptr);  // discovery not done yet
  auto without = std::make_shared<FakeMember>("without", std::make_shared<MemberCapabilities>());
  auto with = std::make_shared<FakeMember>("with");
  auto custom_caps = std::make_shared<MemberCapabilities>();
  custom_caps->custom_metric_resources = {custom_resource("pods/http_requests"),
                                          custom_resource("deployments.apps/rps")};
  custom_caps->external_metric_resources = {external_resource("queue_depth")};
  auto custom = std::make_shared<FakeMember>("custom", custom_caps);
  const MemberList members{unknown, without, with, custom};

  SECTION("metrics.k8s.io: unknown capabilities are asked, a member without the API is not") {
    const auto plan = plan_resource_metrics(members, pods_in("default"));
    CHECK_FALSE(plan.early);
    CHECK(plan.members == std::vector<std::size_t>{0, 2});
  }
  SECTION("metrics.k8s.io served by no member: 503") {
    const auto plan = plan_resource_metrics(MemberList{without}, pods_in("default"));
    REQUIRE(plan.early);
    CHECK(plan.early->code == 503);
    CHECK(plan.members.empty());
    CHECK(plan_resource_metrics(MemberList{}, nodes_named()).early->code == 503);
  }
  SECTION("custom metrics: only members listing <groupresource>/<metric>") {
    const auto plan = plan_custom_metrics(members, custom_query({"apps", "deployments"}, "default", "*", "rps"));
    CHECK_FALSE(plan.early);
    CHECK(plan.members == std::vector<std::size_t>{3});
  }
  const MemberList discovered{without, with, custom};
  SECTION("custom metrics: an undiscovered member is not asked but listed, to be reported") {
    const auto plan = plan_custom_metrics(members, custom_query({"apps", "deployments"}, "default", "*", "rps"));
    CHECK(plan.unasked == std::vector<LeftOutMember>{{"unknown", std::string(kUndiscoveredReason)}});
    auto q = custom_query({"apps", "deployments"}, "default", "*", "rps");
    q.label_selector = selector("fedmetrics/cluster=custom");
    CHECK(plan_custom_metrics(members, q).unasked.empty());  // not chosen: nothing to report
  }
  SECTION("a metric no discovered member has, while one is undiscovered: 503 naming it, not 404") {
    const auto plan = plan_custom_metrics(members, custom_query({"", "pods"}, "default", "*", "nope"));
    REQUIRE(plan.early);
    CHECK(plan.early->code == 503);
    CHECK(plan.early->message ==
          "no member cluster asked has the metric pods/nope (custom.metrics.k8s.io), and these could not be asked: "
          "unknown: left out: its metrics discovery has not succeeded yet, so which metrics it has is unknown");
    const auto external = plan_external_metrics(members, ExternalMetricsQuery{"default", "nope", {}});
    REQUIRE(external.early);
    CHECK(external.early->code == 503);
  }
  SECTION("custom metric no member knows: 404 with the custom-metrics wording") {
    const auto wildcard = plan_custom_metrics(discovered, custom_query({"", "pods"}, "default", "*", "nope"));
    REQUIRE(wildcard.early);
    CHECK(wildcard.early->code == 404);
    CHECK(wildcard.early->message == "the server could not find the metric nope for pods");
    const auto named = plan_custom_metrics(discovered, custom_query({"", "services"}, "default", "web", "rps"));
    REQUIRE(named.early);
    CHECK(named.early->message == "the server could not find the metric rps for services web");
  }
  SECTION("external: only members listing the metric; none: 404") {
    ExternalMetricsQuery q{"default", "queue_depth", {}};
    CHECK(plan_external_metrics(members, q).members == std::vector<std::size_t>{3});
    q.metric = "unknown_metric";
    const auto plan = plan_external_metrics(discovered, q);
    REQUIRE(plan.early);
    CHECK(plan.early->code == 404);
    CHECK(plan.early->message == "the server could not find the metric unknown_metric for externalmetrics");
  }
  SECTION("the cluster selector narrows capable members and is stripped from what is forwarded") {
    auto q = custom_query({"", "pods"}, "default", "*");
    q.label_selector = selector("app=web,fedmetrics/cluster notin (custom)");
    q.metric_selector = selector("verb=GET");
    const auto plan = plan_custom_metrics(members, q);
    CHECK_FALSE(plan.early);  // the metric exists; the client chose to see no member
    CHECK(plan.members.empty());
    CHECK(plan.forwarded.label_selector.to_string() == "app=web");
    CHECK(plan.forwarded.metric_selector.to_string() == "verb=GET");

    q.label_selector = selector("app=web");
    q.metric_selector = selector("fedmetrics/cluster=custom,verb=GET");
    const auto by_metric = plan_custom_metrics(members, q);
    CHECK(by_metric.members == std::vector<std::size_t>{3});
    CHECK(by_metric.forwarded.metric_selector.to_string() == "verb=GET");
  }
  SECTION("a get by name is forwarded as a metadata.name field selector without labels") {
    auto q = pods_in("default", "web-0");
    q.label_selector = selector("app=web,fedmetrics/cluster=with");
    const auto plan = plan_resource_metrics(members, q);
    CHECK(plan.members == std::vector<std::size_t>{2});
    CHECK(plan.forwarded.field_selector.to_string() == "metadata.name=web-0");
    CHECK(plan.forwarded.label_selector.empty());
  }
}

TEST_CASE("Aggregator: custom-metrics discovery is the de-duplicated, sorted union with one scope per parent",
          "[aggregator][merge][discovery]") {
  auto a = std::make_shared<MemberCapabilities>();
  a->custom_metric_resources = {custom_resource("pods/http_requests", true),
                                custom_resource("services/rps", false),      // disagrees with b
                                custom_resource("namespaces/queue", true)};  // root-scoped parent
  auto b = std::make_shared<MemberCapabilities>();
  b->custom_metric_resources = {custom_resource("pods/http_requests", true), custom_resource("services/latency", true),
                                custom_resource("nodes/temperature", false)};
  const auto list = merge_custom_metric_resources({a, nullptr, b}, k8s::CustomMetricsVersion::V1beta1);
  CHECK(list.group_version == "custom.metrics.k8s.io/v1beta1");
  std::vector<std::pair<std::string, bool>> got;
  for (const auto& r : list.resources) {
    got.emplace_back(r.name, r.namespaced);
    CHECK(r.kind == "MetricValueList");
    CHECK(r.verbs == std::vector<std::string>{"get"});
    CHECK(r.singular_name.empty());
  }
  const std::vector<std::pair<std::string, bool>> want{{"namespaces/queue", false},
                                                       {"nodes/temperature", false},
                                                       {"pods/http_requests", true},
                                                       {"services/latency", true},
                                                       {"services/rps", true}};
  CHECK(got == want);
  CHECK(merge_custom_metric_resources({}, k8s::CustomMetricsVersion::V1beta2) ==
        k8s::APIResourceList{"custom.metrics.k8s.io/v1beta2", {}});
}

TEST_CASE("Aggregator: external-metrics discovery is the de-duplicated, sorted union",
          "[aggregator][merge][discovery]") {
  auto a = std::make_shared<MemberCapabilities>();
  a->external_metric_resources = {external_resource("queue_depth"), external_resource("backlog")};
  auto b = std::make_shared<MemberCapabilities>();
  b->external_metric_resources = {external_resource("queue_depth")};
  const auto list = merge_external_metric_resources({b, a});
  CHECK(list == k8s::APIResourceList{"external.metrics.k8s.io/v1beta1",
                                     {{"backlog", "", true, "ExternalMetricValueList", {"get"}},
                                      {"queue_depth", "", true, "ExternalMetricValueList", {"get"}}}});
}

TEST_CASE("Aggregator: query keys are canonical and tell different queries apart", "[aggregator][merge]") {
  auto a = pods_in("default");
  a.label_selector = selector("b=1,a=2");
  auto b = pods_in("default");
  b.label_selector = selector("a=2, b=1");
  CHECK(query_key(a) == query_key(b));

  auto other_ns = b;
  other_ns.namespace_name = "kube-system";
  auto other_cluster = b;
  other_cluster.label_selector = selector("a=2,b=1,fedmetrics/cluster=member1");
  auto nodes = b;
  nodes.kind = ResourceMetricsQuery::Kind::Nodes;
  CHECK(query_key(a) != query_key(other_ns));
  CHECK(query_key(a) != query_key(other_cluster));
  CHECK(query_key(a) != query_key(nodes));

  auto c1 = custom_query({"", "pods"}, "default", "*");
  auto c2 = c1;
  c2.version = k8s::CustomMetricsVersion::V1beta1;  // same answer, held in the hub shape
  CHECK(query_key(c1) == query_key(c2));
  c2.metric_selector = selector("verb=GET");
  CHECK(query_key(c1) != query_key(c2));
  CHECK(query_key(ExternalMetricsQuery{"default", "q", {}}) != query_key(ExternalMetricsQuery{"default", "r", {}}));
}

TEST_CASE("Aggregator: a get by name that found nothing while a member failed is 503, not 404", "[aggregator][merge]") {
  // The failed member may hold the object: "not found" would be a wrong answer.
  std::vector<MemberAnswer<Pods>> answers;
  answers.push_back(ok<Pods>("member1", Pods{}));
  answers.push_back(
      failed<Pods>("member2", MemberError{MemberError::Kind::Timeout, "deadline exceeded", 0, std::nullopt}));
  const auto pod_answer = merge_pod_metrics(std::move(answers), pods_in("default", "web-0"));
  const k8s::Status& s = status_of(pod_answer);
  CHECK(s.code == 503);
  CHECK_THAT(s.message, Catch::Contains("member2"));
  CHECK(pod_answer.warnings.size() == 1);

  std::vector<MemberAnswer<Values>> custom;
  custom.push_back(ok<Values>("member1", Values{}));
  custom.push_back(failed<Values>("member2", MemberError{MemberError::Kind::Refused, "refused", 0, std::nullopt}));
  const auto custom_answer = merge_custom_metrics(std::move(custom), custom_query({"", "services"}, "default", "web"));
  CHECK(status_of(custom_answer).code == 503);
}

TEST_CASE("Aggregator: a left-out member chosen by the query is unasked, reported with its reason, excluded, it is not",
          "[aggregator][merge][left_out]") {
  auto member1 = std::make_shared<FakeMember>("member1");
  auto caps = std::make_shared<MemberCapabilities>();
  caps->resource_metrics = true;
  caps->custom_metric_resources = {custom_resource("deployments.apps/rps")};
  caps->external_metric_resources = {external_resource("queue_depth")};
  member1->set_capabilities(caps);
  const MemberList members{member1};
  const std::vector<LeftOutMember> left_out{{"member2", "Cluster NotReady (ClusterNotReachable)"}};
  const std::vector<LeftOutMember> member2_unasked = left_out;

  SECTION("metrics.k8s.io: every chosen left-out member is unasked, whatever it serves") {
    auto plan = plan_resource_metrics(members, pods_in("default"), left_out);
    CHECK(plan.members == std::vector<std::size_t>{0});
    CHECK(plan.unasked == member2_unasked);
    CHECK(plan.warnings.empty());
  }
  SECTION("the fedmetrics/cluster selector excluding it on purpose: nothing to report") {
    for (const char* text : {"fedmetrics/cluster!=member2", "fedmetrics/cluster notin (member2)",
                             "fedmetrics/cluster=member1", "fedmetrics/cluster in (member1)"}) {
      CAPTURE(text);
      auto q = pods_in("default");
      q.label_selector = selector(text);
      CHECK(plan_resource_metrics(members, q, left_out).unasked.empty());
      auto c = custom_query({"apps", "deployments"}, "default", "web", "rps");
      c.metric_selector = selector(text);
      CHECK(plan_custom_metrics(members, c, left_out).unasked.empty());
      CHECK(plan_external_metrics(members, ExternalMetricsQuery{"default", "queue_depth", selector(text)}, left_out)
                .unasked.empty());
    }
  }
  SECTION("choosing it by name: known, so no 'no member cluster is named' warning; it alone is unasked") {
    auto q = pods_in("default");
    q.label_selector = selector("fedmetrics/cluster=member2");
    auto plan = plan_resource_metrics(members, q, left_out);
    CHECK(plan.warnings.empty());
    CHECK(plan.members.empty());
    CHECK(plan.unasked == member2_unasked);
    CHECK_FALSE(plan.early);  // the merge answers 503 naming it
  }
  SECTION("no asked member serves metrics.k8s.io but one is left out: the merge answers, naming it") {
    auto plan = plan_resource_metrics(MemberList{}, pods_in("default"), left_out);
    CHECK_FALSE(plan.early);
    CHECK(plan.unasked == member2_unasked);
  }
  SECTION("custom and external metrics: unasked too; a metric no asked member has is then 503, not 404") {
    auto c = custom_query({"apps", "deployments"}, "default", "web", "rps");
    CHECK(plan_custom_metrics(members, c, left_out).unasked == member2_unasked);
    c.metric = "nope";
    auto custom = plan_custom_metrics(members, c, left_out);
    REQUIRE(custom.early);
    CHECK(custom.early->code == 503);
    CHECK(custom.early->message ==
          "no member cluster asked has the metric deployments.apps/nope (custom.metrics.k8s.io), and these could not "
          "be asked: member2: left out: Cluster NotReady (ClusterNotReachable)");
    auto external = plan_external_metrics(members, ExternalMetricsQuery{"default", "nope", {}}, left_out);
    REQUIRE(external.early);
    CHECK(external.early->code == 503);
    CHECK_THAT(external.early->message, Catch::Contains("member2: left out: Cluster NotReady (ClusterNotReachable)"));
    // Without it, the same queries are the 404 an HPA can trust.
    CHECK(plan_custom_metrics(members, c).early->code == 404);
    CHECK(plan_external_metrics(members, ExternalMetricsQuery{"default", "nope", {}}).early->code == 404);
  }
}

TEST_CASE("Aggregator: a left-out member is a failed member of the answer: a Warning, and alone a 503",
          "[aggregator][merge][left_out]") {
  const MemberError not_ready = left_out_error("Cluster NotReady (ClusterNotReachable)");
  CHECK(member_warning("member2", not_ready) == "member2: left out: Cluster NotReady (ClusterNotReachable)");

  // A list: the others' items and the Warning.
  std::vector<MemberAnswer<Pods>> list;
  list.push_back(ok<Pods>("member1", {pod("default", "web-0")}));
  list.push_back(failed<Pods>("member2", not_ready));
  const auto listed = merge_pod_metrics(std::move(list), pods_in("default"));
  CHECK(items_of(listed).size() == 1);
  CHECK(listed.warnings == std::vector<std::string>{"member2: left out: Cluster NotReady (ClusterNotReachable)"});

  // A get by name found nowhere else: 503 naming it, never 404.
  std::vector<MemberAnswer<Pods>> get;
  get.push_back(ok<Pods>("member1", Pods{}));
  get.push_back(failed<Pods>("member2", not_ready));
  const auto got = merge_pod_metrics(std::move(get), pods_in("default", "db-0"));
  CHECK(status_of(got).code == 503);
  CHECK_THAT(status_of(got).message, Catch::Contains("member2: left out: Cluster NotReady (ClusterNotReachable)"));

  // A summed object metric: the partial sum, and the Warning that says it is partial.
  std::vector<MemberAnswer<Values>> summed;
  summed.push_back(ok<Values>("member1", {metric_value("Deployment", "default", "web", "13333m")}));
  summed.push_back(ok<Values>("member3", {metric_value("Deployment", "default", "web", "13333m")}));
  summed.push_back(failed<Values>("member2", not_ready));
  const auto sum = merge_custom_metrics(std::move(summed), custom_query({"apps", "deployments"}, "default", "web"));
  REQUIRE(items_of(sum).size() == 1);
  CHECK(items_of(sum)[0].value.to_string() == "26666m");
  CHECK(sum.warnings == std::vector<std::string>{"member2: left out: Cluster NotReady (ClusterNotReachable)"});

  // An external metric whose only source was left out: 503 naming it.
  std::vector<MemberAnswer<Series>> external;
  external.push_back(failed<Series>("member2", not_ready));
  const auto series = merge_external_metrics(std::move(external), ExternalMetricsQuery{"default", "queue_depth", {}});
  CHECK(status_of(series).code == 503);
  CHECK(status_of(series).message ==
        "no member cluster could serve external.metrics.k8s.io: member2: left out: Cluster NotReady "
        "(ClusterNotReachable)");
}

TEST_CASE("Aggregator: the same client error from every asked member is the client's answer, not a member outage",
          "[aggregator][merge][client_error]") {
  const auto http = [](int code, std::optional<k8s::Status> status = std::nullopt) {
    MemberError e = error(MemberError::Kind::HttpStatus, "HTTP " + std::to_string(code));
    e.http_status = code;
    e.status = std::move(status);
    return e;
  };
  for (int code : {400, 413, 414, 422, 431}) CHECK(is_client_error(http(code)));
  // About our credentials in the member, its objects or its load: member failures.
  for (int code : {401, 403, 404, 408, 429, 500, 503}) CHECK_FALSE(is_client_error(http(code)));
  CHECK_FALSE(is_client_error(error(MemberError::Kind::Timeout, "t")));

  SECTION("every member 431: a 431 Status, no Warning") {
    std::vector<MemberAnswer<Pods>> answers;
    answers.push_back(failed<Pods>("member2", http(431)));
    answers.push_back(failed<Pods>("member1", http(431)));
    const auto answer = merge_pod_metrics(std::move(answers), pods_in("default"));
    const auto& s = status_of(answer);
    CHECK(s.code == 431);
    CHECK(s.reason.empty());  // apimachinery has no reason for 431
    CHECK(s.message == "every member cluster refused the request as forwarded to it: HTTP 431");
    CHECK(answer.warnings.empty());
  }
  SECTION("every member 422 without a Status: the reason apimachinery gives the code") {
    std::vector<MemberAnswer<Pods>> answers;
    answers.push_back(failed<Pods>("member1", http(422)));
    answers.push_back(failed<Pods>("member2", http(422)));
    CHECK(status_of(merge_pod_metrics(std::move(answers), pods_in("default"))).reason == "Invalid");
  }
  SECTION("a member's own Status is the answer, as kube-apiserver words it") {
    auto bad = k8s::Status::bad_request("unable to parse requirement: values[0]: Invalid value");
    std::vector<MemberAnswer<Values>> answers;
    answers.push_back(failed<Values>("member1", http(400, bad)));
    answers.push_back(failed<Values>("member2", http(400)));
    const auto answer = merge_custom_metrics(std::move(answers), custom_query({"", "pods"}, "default", "*"));
    CHECK(status_of(answer) == bad);
  }
  SECTION("members left out do not count: the asked ones all refused alike") {
    std::vector<MemberAnswer<Series>> answers;
    answers.push_back(failed<Series>("member1", http(413)));
    answers.push_back(failed<Series>("member2", left_out_error("Cluster NotReady (ClusterNotReachable)")));
    const auto answer = merge_external_metrics(std::move(answers), ExternalMetricsQuery{});
    CHECK(status_of(answer).code == 413);
    // k8s::reason_for_code's, as client-go names a 413 that came without a Status.
    CHECK(status_of(answer).reason.empty());
  }
  SECTION("not alike, or not everyone: member failures as before") {
    std::vector<MemberAnswer<Pods>> mixed;
    mixed.push_back(failed<Pods>("member1", http(400)));
    mixed.push_back(failed<Pods>("member2", http(431)));
    CHECK(status_of(merge_pod_metrics(std::move(mixed), pods_in("default"))).code == 503);

    std::vector<MemberAnswer<Pods>> one;
    one.push_back(failed<Pods>("member1", http(400)));
    one.push_back(ok<Pods>("member2", {pod("default", "web-0")}));
    const auto partial = merge_pod_metrics(std::move(one), pods_in("default"));
    CHECK(items_of(partial).size() == 1);
    CHECK(partial.warnings == std::vector<std::string>{"member1: HTTP 400"});

    std::vector<MemberAnswer<Pods>> unauthorized;
    unauthorized.push_back(failed<Pods>("member1", http(401)));
    unauthorized.push_back(failed<Pods>("member2", http(401)));
    CHECK(status_of(merge_pod_metrics(std::move(unauthorized), pods_in("default"))).code == 503);

    std::vector<MemberAnswer<Pods>> only_left_out;
    only_left_out.push_back(failed<Pods>("member2", left_out_error("Cluster NotReady (ClusterNotReachable)")));
    CHECK(status_of(merge_pod_metrics(std::move(only_left_out), pods_in("default"))).code == 503);
  }
}

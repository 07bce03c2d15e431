// The pods list merged from the members' text (transcoded items,
// merge_encoded_pod_metrics) against the reference path (decoded PodMetrics,
// merge_pod_metrics and its list JSON): byte for byte the same answer, or the
// same Status, for the same member answers, across selectors, failed and
// left-out members, same-named pods in several members and unsorted members.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <variant>
#include <vector>

#include "support/fake_member_cluster.hpp"
#include "aggregator/merge.hpp"
#include "aggregator/plan.hpp"
#include "fedmetrics/k8s/metrics_list_items.hpp"

using namespace fedmetrics;
using namespace fedmetrics::aggregator;
using namespace fedmetrics::aggregator::testing;

namespace {

// One member's reply: its PodMetricsList text, or how it failed.
struct Reply {
  std::string cluster;
  std::variant<std::string, MemberError> text_or_error;
};

// What a client would see: the body (the list, or the Status's message and code) and the warnings.
struct Seen {
  std::string body;
  std::vector<std::string> warnings;
  friend bool operator==(const Seen&, const Seen&) = default;
};

Seen seen_status(const k8s::Status& status, std::vector<std::string> warnings) {
  return {std::to_string(status.code) + " " + status.reason + ": " + status.message, std::move(warnings)};
}

Seen reference_path(const std::vector<Reply>& replies, ResourceMetricsQuery query) {
  query.encode_list = true;
  std::vector<MemberAnswer<std::vector<k8s::PodMetrics>>> answers;
  for (const Reply& r : replies) {
    if (const auto* text = std::get_if<std::string>(&r.text_or_error)) {
      auto items = k8s::try_decode_pod_metrics_list(*text);
      REQUIRE(items.has_value());
      answers.push_back({r.cluster, std::move(*items)});
    } else {
      answers.push_back({r.cluster, std::get<MemberError>(r.text_or_error)});
    }
  }
  auto answer = merge_pod_metrics(std::move(answers), query);
  if (const auto* status = std::get_if<k8s::Status>(&answer.result)) return seen_status(*status, answer.warnings);
  return {*answer.encodings->get(EncodingMemo::kListJson, [] { return std::string("not encoded ahead"); }),
          answer.warnings};
}

Seen streaming_path(const std::vector<Reply>& replies, ResourceMetricsQuery query) {
  query.encode_list = true;
  const auto shared = std::make_shared<const ResourceMetricsQuery>(query);
  std::vector<MemberAnswer<k8s::EncodedItems>> answers;
  for (const Reply& r : replies) {
    if (const auto* text = std::get_if<std::string>(&r.text_or_error)) {
      auto items = k8s::transcode_pod_metrics_list(*text, *item_preparation(r.cluster, shared));
      REQUIRE(items.has_value());
      answers.push_back({r.cluster, std::move(*items)});
    } else {
      answers.push_back({r.cluster, std::get<MemberError>(r.text_or_error)});
    }
  }
  auto answer = merge_encoded_pod_metrics(std::move(answers), query);
  if (const auto* status = std::get_if<k8s::Status>(&answer.result)) return seen_status(*status, answer.warnings);
  CHECK(std::get<std::vector<k8s::PodMetrics>>(answer.result).empty());  // JSON only
  REQUIRE(answer.json_list);
  std::string body;
  for (const std::string_view piece : answer.json_list->pieces) body += piece;
  CHECK(body.size() == answer.json_list->bytes);
  return {body, answer.warnings};
}

// A member's answer: pods of a few namespaces and names (so that members
// share some), in the member's own order, which need not be sorted.
std::string member_text(std::mt19937& rng, int count, bool sorted) {
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  static const char* namespaces[] = {"a", "b", "default"};
  std::vector<k8s::PodMetrics> pods;
  for (int i = 0; i < count; ++i) {
    k8s::Labels labels;
    if (pick(2)) labels["app"] = "web";
    // Names longer than 16 bytes that agree that far, and names that begin others.
    const std::string name = (pick(2) ? "web-" : "api-deployment-7c45cffc96-") + std::to_string(pick(20));
    pods.push_back(pod(namespaces[pick(3)], name, pick(2) ? "10m" : "1500m", labels));
  }
  if (sorted) {
    std::stable_sort(pods.begin(), pods.end(), [](const k8s::PodMetrics& x, const k8s::PodMetrics& y) {
      return std::tie(x.metadata.namespace_name, x.metadata.name) <
             std::tie(y.metadata.namespace_name, y.metadata.name);
    });
  }
  return k8s::encode_pod_metrics_list(pods);
}

ResourceMetricsQuery pods_in(std::string ns) {
  ResourceMetricsQuery q;
  q.namespace_name = std::move(ns);
  return q;
}

ResourceMetricsQuery with_fields(ResourceMetricsQuery q, const std::string& fields) {
  auto parsed = k8s::FieldSelector::parse(fields);
  REQUIRE(parsed.ok());
  q.field_selector = *parsed;
  return q;
}

MemberError timeout() { return MemberError{MemberError::Kind::Timeout, "no answer within 3s", 0, std::nullopt}; }

}  // namespace

TEST_CASE("Aggregator: a pods list merged from the members' text is byte for byte the reference path's",
          "[aggregator][merge]") {
  std::mt19937 rng(3);
  const std::vector<ResourceMetricsQuery> queries = {
      pods_in(""), pods_in("b"), with_fields(pods_in(""), "metadata.name!=web-3"),
      with_fields(pods_in(""), "metadata.namespace=default,metadata.name!=web-1")};
  for (int round = 0; round < 60; ++round) {
    std::vector<Reply> replies;
    const int members = std::uniform_int_distribution<int>(1, 6)(rng);
    for (int m = members; m >= 1; --m) {  // out of name order, as members answer
      const std::string name = "member" + std::to_string(m);
      switch (std::uniform_int_distribution<int>(0, 7)(rng)) {
        case 0: replies.push_back({name, timeout()}); break;
        case 1: replies.push_back({name, left_out_error("Cluster NotReady")}); break;
        case 2: replies.push_back({name, member_text(rng, 0, true)}); break;
        case 3: replies.push_back({name, member_text(rng, 12, false)}); break;
        default: replies.push_back({name, member_text(rng, 15, true)});
      }
    }
    for (const ResourceMetricsQuery& query : queries) {
      INFO("round " << round << ", namespace '" << query.namespace_name << "', fields '"
                    << query.field_selector.to_string() << "'");
      const Seen want = reference_path(replies, query);
      CHECK(streaming_path(replies, query) == want);
    }
  }
}

TEST_CASE("Aggregator: a pods list merged from the members' text fails as the reference path does",
          "[aggregator][merge]") {
  MemberError refused{MemberError::Kind::HttpStatus, "HTTP 400: bad selector", 400, std::nullopt};
  const std::vector<std::vector<Reply>> cases = {
      {{"member1", timeout()}, {"member2", left_out_error("Cluster NotReady")}},  // nobody answered: 503
      {{"member1", refused}, {"member2", refused}},                               // the client's error: 400
      {},                                                                         // no member: an empty list
  };
  for (const auto& replies : cases) {
    const Seen want = reference_path(replies, pods_in(""));
    CHECK(streaming_path(replies, pods_in("")) == want);
  }
}

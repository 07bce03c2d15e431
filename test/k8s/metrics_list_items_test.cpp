// The transcoder (a member's PodMetricsList text straight to encoded list
// items) against its reference, decoding the text into PodMetrics and
// encoding each item: the same bytes and keys wherever it reads a document,
// and nullopt wherever the fast decoder gives up.
#include <catch2/catch.hpp>

#include <random>

#include "fedmetrics/k8s/metrics_list_items.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"

using namespace fedmetrics::k8s;

namespace {

constexpr const char* kAnnotation = "resource.karmada.io/query-from-cluster";

ItemPreparation preparation(std::string member = "member2", decltype(ItemPreparation::keep) keep = {}) {
  return ItemPreparation{kAnnotation, std::move(member), std::move(keep)};
}

// The reference: the fast decoder (or, where it gives up, the tree decoder), then each item encoded.
EncodedItems reference(const std::string& body, const ItemPreparation& prep) {
  if (auto fast = try_decode_pod_metrics_list(body)) return encode_pod_metrics_items(std::move(*fast), prep);
  auto doc = parse_document(body);
  REQUIRE(doc.ok());
  auto items = pod_metrics_list_from_json(*doc);
  REQUIRE(items.ok());
  return encode_pod_metrics_items(std::move(*items), prep);
}

void check_same(const EncodedItems& got, const EncodedItems& want) {
  CHECK(got.bytes == want.bytes);
  REQUIRE(got.items.size() == want.items.size());
  for (std::size_t i = 0; i < got.items.size(); ++i) {
    CHECK(got.json(got.items[i]) == want.json(want.items[i]));
    CHECK(got.namespace_of(got.items[i]) == want.namespace_of(want.items[i]));
    CHECK(got.name_of(got.items[i]) == want.name_of(want.items[i]));
    CHECK(got.bytes[got.items[i].begin + got.items[i].size] == ',');
  }
}

// Pods with what changes the encoding: unsorted and repeated map keys, an
// annotation of our own key and keys that sort before and after it,
// quantities, times and durations in other than their canonical text.
std::string member_text(std::mt19937& rng, int pods) {
  static const char* quantities[] = {"0", "5m", "2318451n", "14536Ki", "1500m", "128Mi", "1e3", "100u", "0.5", "1000m"};
  static const char* times[] = {"2026-08-22T10:15:20Z", "2026-08-22T10:15:20.5Z", "2026-08-22T12:15:20+02:00"};
  static const char* windows[] = {"15s", "15.021s", "1m0s", "1500ms", "0s", ""};
  static const char* annotation_keys[] = {"a.io/x", "z.io/y", kAnnotation, "resource.karmada.io/z"};
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  std::string out = R"({"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[)";
  for (int i = 0; i < pods; ++i) {
    if (i) out += ',';
    out += R"({"metadata":{"name":"web-)" + std::to_string(pick(50)) + '"';
    if (pick(5) != 0) out += std::string(R"(,"namespace":")") + (pick(2) ? "default" : "kube-system") + '"';
    if (pick(3) != 0) {
      out += R"(,"labels":{)";
      for (int l = pick(4); l >= 0; --l) out += "\"k" + std::to_string(pick(4)) + "\":\"v" + std::to_string(l) + "\",";
      out.back() = '}';
    }
    if (pick(2) != 0) {
      out += R"(,"annotations":{)";
      for (int a = pick(3); a >= 0; --a) out += std::string("\"") + annotation_keys[pick(4)] + "\":\"x\",";
      out.back() = '}';
    }
    if (pick(4) != 0) out += std::string(R"(,"creationTimestamp":")") + times[pick(3)] + '"';
    else if (pick(2)) out += R"(,"creationTimestamp":null)";
    out += R"(,"uid":"u"})";
    if (pick(6) != 0) out += std::string(R"(,"timestamp":")") + times[pick(3)] + '"';
    if (pick(6) != 0) out += std::string(R"(,"window":")") + windows[pick(6)] + '"';
    out += R"(,"containers":[)";
    for (int c = pick(3); c > 0; --c) {
      out += "{\"name\":\"c" + std::to_string(c) + "\",\"usage\":{";
      for (int u = pick(3); u >= 0; --u)
        out += std::string(pick(2) ? "\"memory\"" : "\"cpu\"") + ":\"" + quantities[pick(10)] + "\",";
      out.back() = '}';
      out += "},";
    }
    if (out.back() == ',') out.back() = ']';
    else out += ']';
    out += '}';
  }
  return out + "]}";
}

}  // namespace

TEST_CASE("Encoded list items: the transcoder writes the bytes that decoding and encoding each item write",
          "[k8s][encode]") {
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    const std::string body = member_text(rng, std::uniform_int_distribution<int>(0, 12)(rng));
    INFO(body);
    const auto prep = preparation("member" + std::to_string(round % 3));
    auto got = transcode_pod_metrics_list(body, prep);
    REQUIRE(got.has_value());
    check_same(*got, reference(body, prep));
  }
}

TEST_CASE("Encoded list items: the items the preparation refuses are left out, alike", "[k8s][encode]") {
  std::mt19937 rng(5);
  const auto prep = preparation(
      "member1", [](std::string_view ns, std::string_view name) { return ns == "default" && name != "web-3"; });
  for (int round = 0; round < 50; ++round) {
    const std::string body = member_text(rng, 20);
    auto got = transcode_pod_metrics_list(body, prep);
    REQUIRE(got.has_value());
    const EncodedItems want = reference(body, prep);
    check_same(*got, want);
    for (const auto& item : got->items) CHECK(got->namespace_of(item) == "default");
  }
}

TEST_CASE("Encoded list items: escapes, numbers and unknown fields read through nlohmann's parser, alike",
          "[k8s][encode]") {
  const std::vector<std::string> bodies = {
      // Unknown fields at every depth, repeated map keys.
      R"({"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1",
    "metadata":{"resourceVersion":"5","selfLink":"/x","continue":null},"extra":[1,2.5,true,null,{"a":[{}]}],
    "items":[{"metadata":{"name":"web","namespace":"default","uid":"u-1","generation":3,"deleted":false,
      "ownerReferences":[{"kind":"ReplicaSet","name":"web-1","controller":true}],
      "labels":{"app":"web","app":"api"},"creationTimestamp":"2026-08-22T10:15:31Z"},
      "timestamp":"2026-08-22T10:15:20Z","window":"15.021s","unknown":{"deep":{"er":[[["x"]]]}},
      "containers":[{"name":"nginx","usage":{"cpu":"2318451n","memory":"14536Ki","cpu":"5m"},"restarts":2}]}]})",
      // Nulls where a value may be absent.
      R"({"kind":null,"items":null})",
      R"({"items":[{"metadata":{"name":"web","creationTimestamp":null,"labels":null},
                    "timestamp":null,"window":null,"containers":[{"name":null,"usage":null}]}]})",
      // Escapes and non-ASCII text: the second reader, and the writer's escaping.
      "{\"items\":[{\"metadata\":{\"name\":\"w\\u00e9b\\\"q\",\"namespace\":\"caf\xc3\xa9\","
      "\"labels\":{\"k\":\"line\\nbreak\"},\"annotations\":{\"" +
          std::string(kAnnotation) + "\":\"theirs\"}},\"containers\":[]}]}",
  };
  for (const std::string& body : bodies) {
    INFO(body);
    const auto prep = preparation();
    auto got = transcode_pod_metrics_list(body, prep);
    REQUIRE(got.has_value());
    check_same(*got, reference(body, prep));
  }
}

TEST_CASE("Encoded list items: where the fast decoder gives up, so does the transcoder", "[k8s][encode]") {
  const std::string item_head = R"({"items":[{"metadata":{"name":"web"},"timestamp":"2026-08-22T10:15:20Z",)";
  const std::vector<std::string> bodies = {
      "",
      "{",
      "[]",
      R"({"kind":"NodeMetricsList","items":[]})",
      R"({"items":[{"timestamp":"2026-08-22T10:15:20Z"}]})",  // metadata is required
      R"({"items":[{"metadata":{"name":5}}]})",
      item_head + R"("window":"soon"}]})",
      item_head + R"("containers":[{"name":"c","usage":{"cpu":"lots"}}]}]})",
      item_head + R"("containers":[{"name":"c","usage":{"cpu":" 5m "}}]}]})",
      R"({"items":[{"metadata":{"name":"web","creationTimestamp":"yesterday"}}]})",
      R"({"items":[{"metadata":{"name":"a","name":"b"}}]})",
      R"({"items":[null]})",
      R"({"items":[]} trailing)",
  };
  for (const std::string& body : bodies) {
    INFO(body);
    CHECK_FALSE(try_decode_pod_metrics_list(body).has_value());
    CHECK_FALSE(transcode_pod_metrics_list(body, preparation()).has_value());
  }
}

TEST_CASE("Encoded list items: a list's frame is the empty list's text around its items", "[k8s][encode]") {
  const auto [pod_head, pod_tail] = pod_metrics_list_frame();
  CHECK(pod_head + pod_tail == encode_pod_metrics_list({}));
  CHECK(pod_head.back() == '[');
  const auto [node_head, node_tail] = node_metrics_list_frame();
  CHECK(node_head + node_tail == encode_node_metrics_list({}));
  CHECK(node_tail.front() == ']');
}

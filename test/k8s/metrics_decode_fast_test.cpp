// The fast PodMetricsList decoder against the tree decoder: the same items
// wherever it reads a document, and nullopt (the fallback) for everything
// else, including every malformed document.
#include <catch2/catch.hpp>

#include <random>

#include "fedmetrics/k8s/metrics_types.hpp"

using namespace fedmetrics::k8s;
using nlohmann::json;

namespace {

std::vector<PodMetrics> tree_decode(const std::string& body) {
  auto doc = parse_document(body);
  REQUIRE(doc.ok());
  auto items = pod_metrics_list_from_json(*doc);
  REQUIRE(items.ok());
  return *items;
}

PodMetrics sample_pod(std::mt19937& rng, int i) {
  static const char* quantities[] = {"0", "5m", "2318451n", "14536Ki", "1500m", "128Mi", "1e3", "100u"};
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  PodMetrics p;
  p.metadata.name = "web-" + std::to_string(i) + (pick(4) == 0 ? "-\"quoted\\" : "");
  if (pick(5) != 0) p.metadata.namespace_name = pick(2) ? "default" : "caf\xc3\xa9";
  for (int l = pick(4); l > 0; --l)
    p.metadata.labels["k" + std::to_string(pick(5))] = "v\n" + std::to_string(pick(100));
  if (pick(2)) p.metadata.annotations["resource.karmada.io/query-from-cluster"] = "member" + std::to_string(pick(3));
  if (pick(4) != 0) p.metadata.creation_timestamp = Timestamp(std::chrono::seconds(1700000000 + pick(100000)));
  p.timestamp = Timestamp(std::chrono::milliseconds(1700000000000 + pick(1000000)));
  p.window = std::chrono::milliseconds(pick(30000));
  for (int c = pick(4); c > 0; --c) {
    ContainerMetrics cm{"c" + std::to_string(c), {}};
    if (pick(4) != 0) cm.usage["cpu"] = *Quantity::parse(quantities[pick(8)]);
    if (pick(4) != 0) cm.usage["memory"] = *Quantity::parse(quantities[pick(8)]);
    p.containers.push_back(std::move(cm));
  }
  return p;
}

}  // namespace

TEST_CASE("Fast PodMetricsList decoder: the same items as the tree decoder on what we and metrics-server write",
          "[k8s][decode]") {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<PodMetrics> pods;
    const int n = std::uniform_int_distribution<int>(0, 8)(rng);
    for (int i = 0; i < n; ++i) pods.push_back(sample_pod(rng, i));
    const std::string body = encode_pod_metrics_list(pods);
    auto fast = try_decode_pod_metrics_list(body);
    REQUIRE(fast.has_value());
    CHECK(*fast == tree_decode(body));
    CHECK(fast->size() == pods.size());
  }
}

TEST_CASE("Fast PodMetricsList decoder: skips what it does not read, at any depth", "[k8s][decode]") {
  const std::string body = R"({"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1",
    "metadata":{"resourceVersion":"5","selfLink":"/x","continue":null},"extra":[1,2.5,true,null,{"a":[{}]}],
    "items":[{"metadata":{"name":"web","namespace":"default","uid":"u-1","generation":3,"deleted":false,
      "ownerReferences":[{"kind":"ReplicaSet","name":"web-1","controller":true}],
      "labels":{"app":"web","app":"api"},"creationTimestamp":"2026-08-22T10:15:31Z"},
      "timestamp":"2026-08-22T10:15:20Z","window":"15.021s","unknown":{"deep":{"er":[[["x"]]]}},
      "containers":[{"name":"nginx","usage":{"cpu":"2318451n","memory":"14536Ki","cpu":"5m"},"restarts":2}]}]})";
  auto fast = try_decode_pod_metrics_list(body);
  REQUIRE(fast.has_value());
  CHECK(*fast == tree_decode(body));
  REQUIRE(fast->size() == 1);
  CHECK(fast->front().metadata.labels.at("app") == "api");  // a repeated key: the last, as the tree keeps it
  CHECK(fast->front().containers.front().usage.at("cpu").to_string() == "5m");

  // Nulls read as absent, as Go leaves the zero value (our own encoder writes
  // a zero creationTimestamp as null).
  for (const std::string& doc :
       {std::string(R"({"kind":null,"items":null})"),
        std::string(R"({"items":[{"metadata":{"name":"web","creationTimestamp":null,"labels":null},
                                   "timestamp":null,"window":null,"containers":[{"name":null,"usage":null}]}]})")}) {
    INFO(doc);
    auto read = try_decode_pod_metrics_list(doc);
    REQUIRE(read.has_value());
    CHECK(*read == tree_decode(doc));
  }
}

TEST_CASE("Fast PodMetricsList decoder: anything unusual falls back to the tree decoder", "[k8s][decode]") {
  const std::string item_head = R"({"items":[{"metadata":{"name":"web"},"timestamp":"2026-08-22T10:15:20Z",)";
  struct Case {
    std::string body;
    bool tree_accepts;  // the document is valid, only unusual
  };
  const std::vector<Case> cases = {
      {"", false},
      {"{", false},
      {"[]", false},
      {R"("text")", false},
      {R"({"kind":"NodeMetricsList","items":[]})", false},
      {R"({"apiVersion":"v1","items":[]})", false},
      {R"({"items":{}})", false},
      {R"({"items":["x"]})", false},
      {R"({"items":[{"timestamp":"2026-08-22T10:15:20Z"}]})", false},  // metadata is required
      {R"({"items":[{"metadata":{"name":5}}]})", false},
      {R"({"items":[{"metadata":"web"}]})", false},
      {item_head + R"("window":"soon"}]})", false},
      {item_head + R"("containers":[{"name":"c","usage":{"cpu":"lots"}}]}]})", false},
      {item_head + R"("containers":[{"name":"c","usage":{"cpu":" 5m "}}]}]})", true},  // Go trims the spaces
      {item_head + R"("containers":[{"name":"c","usage":{"cpu":5}}]}]})", true},       // a number quantity
      {R"({"items":[{"metadata":{"name":"a","name":"b"}}]})", true},                   // a repeated known key
      {R"({"items":[null]})", false},                                                  // an item without metadata
      {R"({"items":[{"metadata":null}]})", false},
      {R"({"items":[{"metadata":{"labels":{"a":null}}}]})", false},
      {R"({"items":[]} trailing)", false},
  };
  for (const auto& c : cases) {
    INFO(c.body);
    CHECK_FALSE(try_decode_pod_metrics_list(c.body).has_value());
    auto doc = parse_document(c.body);
    const bool tree_ok = doc.ok() && pod_metrics_list_from_json(*doc).ok();
    CHECK(tree_ok == c.tree_accepts);
  }
}

// The first reader takes only the subset metrics-server writes (ASCII
// strings without escapes, objects, arrays) and must never read text that is
// not JSON: each of these is one character away from a document it reads.
TEST_CASE("Fast PodMetricsList decoder: malformed text near the common shape is never read", "[k8s][decode]") {
  const std::string good =
      R"({"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[{"metadata":{"name":"web",)"
      R"("namespace":"default","labels":{"app":"web"}},"timestamp":"2026-08-22T10:15:20Z","window":"15s",)"
      R"("containers":[{"name":"c","usage":{"cpu":"5m","memory":"8Mi"}}]}]})";
  REQUIRE(try_decode_pod_metrics_list(good).has_value());
  CHECK(*try_decode_pod_metrics_list(good) == tree_decode(good));
  // JSON's white space anywhere between tokens, and after the document.
  const std::string spaced =
      " \t\r\n{ \"items\" :\n[ { \"metadata\" : { \"name\" : \"web\" , \"labels\" : { } } ,"
      " \"containers\" : [ ] } ] }\n\n";
  REQUIRE(try_decode_pod_metrics_list(spaced).has_value());
  CHECK(*try_decode_pod_metrics_list(spaced) == tree_decode(spaced));
  const std::string literals =
      R"({"items":[{"metadata":{"name":"web","creationTimestamp":null,"deleted":false},"live":true,"timestamp":null}]})";
  REQUIRE(try_decode_pod_metrics_list(literals).has_value());
  CHECK(*try_decode_pod_metrics_list(literals) == tree_decode(literals));

  const std::vector<std::string> malformed = {
      R"({"items":[],})",  // trailing comma in an object
      R"({"items":[{"metadata":{"name":"web"},}]})",
      R"({"items":[{"metadata":{"name":"web"}},]})",  // trailing comma in an array
      R"({"kind":"PodMetricsList" "items":[]})",      // missing comma
      R"({"items" []})",                              // missing colon
      R"({"items"::[]})",
      R"({"items":[]}})",  // one close too many
      R"({"items":[})",    // mismatched close
      R"({"items":[{"metadata":{"name":"web"}]}})",
      R"({"items":[]])",
      R"({"items":[)",  // cut short
      R"({"items":[{"metadata":{"name":"we)",
      R"({"items":[]} {})",  // a second document
      R"({"items":[]}x)",
      R"({items:[]})",  // unquoted key
      R"({'items':[]})",
      R"({"items":[],"metadata":{"name":"a"})",  // an unclosed object at the end
      R"(,{"items":[]})",
      R"({,"items":[]})",
      R"({"items":[,]})",
      R"({"items":[{"metadata":{"name":"web","creationTimestamp":nul}}]})",  // literals cut or run on
      R"({"items":[{"metadata":{"name":"web","creationTimestamp":nullx}}]})",
      R"({"items":[{"metadata":{"name":"web"},"extra":tru}]})",
      R"({"items":[{"metadata":{"name":"web"},"extra":falsey}]})",
      R"({"items":[{"metadata":{"name":"web"},"extra":None}]})",
      "{\"items\":[{\"metadata\":{\"name\":\"w\x01"
      "b\"}}]}",                                            // a raw control character
      "{\"items\":[{\"metadata\":{\"name\":\"web\\\"}}]}",  // an escape that swallows the quote
  };
  for (const std::string& body : malformed) {
    INFO(body);
    CHECK_FALSE(try_decode_pod_metrics_list(body).has_value());
    CHECK_FALSE(parse_document(body).ok());
  }
}

// The transcoder (a member's PodMetricsList text straight to encoded list
// items) against its reference, decoding the text into PodMetrics and
// encoding each item: the same bytes and keys wherever it reads a document,
// and nullopt wherever the fast decoder gives up.
#include <catch2/catch.hpp>

#include <random>

#include "fedmetrics/k8s/metrics_list_items.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "k8s/pod_metrics_scan.hpp"

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

// A member of ours: its list as the encoder writes it (the simulator's
// answers), whose items the transcoder copies with the annotation inserted.
// Pods with and without annotations (sorting before, after and as ours),
// labels, namespaces, creation times, several containers.
std::string encoder_text(std::mt19937& rng, int pods) {
  static const char* annotation_keys[] = {"a.io/x", "z.io/y", kAnnotation, "resource.karmada.io/z"};
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  std::vector<PodMetrics> items;
  for (int i = 0; i < pods; ++i) {
    PodMetrics& p = items.emplace_back();
    p.metadata.name = "web-" + std::to_string(pick(50));
    if (pick(5) != 0) p.metadata.namespace_name = pick(2) ? "default" : "kube-system";
    for (int l = pick(3); l > 0; --l) p.metadata.labels["k" + std::to_string(pick(4))] = "v" + std::to_string(l);
    for (int a = pick(3); a > 0; --a) p.metadata.annotations[annotation_keys[pick(4)]] = "x";
    if (pick(3) != 0) p.metadata.creation_timestamp = *parse_time("2026-08-22T10:15:31Z");
    p.timestamp = *parse_time(pick(2) ? "2026-08-22T10:15:20Z" : "2026-08-22T10:15:21Z");
    p.window = std::chrono::milliseconds(pick(2) ? 15021 : 15000);
    for (int c = pick(3); c > 0; --c)
      p.containers.push_back(
          {"c" + std::to_string(c),
           {{"cpu", Quantity::from_nanos(pick(1000000) + 1)},
            {"memory", Quantity::from_value(pick(1 << 20) * 1024 + 4096, QuantityFormat::BinarySI)}}});
  }
  return encode_pod_metrics_list(items);
}

}  // namespace

TEST_CASE("Encoded list items: text almost as the encoder writes it is written afresh, alike", "[k8s][encode]") {
  // Each edit of an encoder-written item makes it other than the encoder's:
  // copied as it is, it would differ from the reference.
  const std::string item =
      R"({"containers":[{"name":"c","usage":{"cpu":"5m","memory":"14536Ki"}}],"metadata":{"annotations":{"b.io/x":"y"},)"
      R"("creationTimestamp":"2026-08-22T10:15:31Z","labels":{"app":"web"},"name":"web","namespace":"default"},)"
      R"("timestamp":"2026-08-22T10:15:20Z","window":"15s"})";
  const std::vector<std::pair<std::string, std::string>> edits = {
      {"", ""},  // none: copied
      {R"("cpu":"5m")", R"("cpu":"5000000n")"},
      {R"("cpu":"5m")", R"("cpu":"0.005")"},
      {R"("memory":"14536Ki")", R"("memory":"14884864")"},
      {R"("memory":"14536Ki")", R"("memory":"1024Ki")"},
      {R"("cpu":"5m","memory":"14536Ki")", R"("memory":"14536Ki","cpu":"5m")"},
      {R"("cpu":"5m")", R"("cpu":"5m","cpu":"6m")"},
      {R"("labels":{"app":"web"},)", R"("labels":{},)"},
      {R"("labels":{"app":"web"},)", R"("labels":{"b":"1","a":"2"},)"},
      {R"({"b.io/x":"y"})", R"({})"},
      {R"({"b.io/x":"y"})", R"({"resource.karmada.io/query-from-cluster":"theirs"})"},
      {R"("namespace":"default")", R"("namespace":"")"},
      {R"(,"namespace":"default")", ""},
      {R"("creationTimestamp":"2026-08-22T10:15:31Z")", R"("creationTimestamp":"2026-08-22T12:15:31+02:00")"},
      {R"("creationTimestamp":"2026-08-22T10:15:31Z",)", ""},
      {R"("creationTimestamp":"2026-08-22T10:15:31Z")", R"("creationTimestamp":null)"},
      {R"("timestamp":"2026-08-22T10:15:20Z")", R"("timestamp":"2026-08-22T10:15:20.000Z")"},
      {R"("timestamp":"2026-08-22T10:15:20Z")", R"("timestamp":null)"},
      {R"("window":"15s")", R"("window":"15000ms")"},
      {R"("window":"15s")", R"("window":"")"},
      {R"(,"window":"15s")", ""},
      {R"("name":"web",)", ""},
      {R"("name":"web")", R"("name":null)"},
      {R"("name":"c",)", ""},
      {R"({"name":"c",)", R"({"name":"c","restarts":null,)"},
      {R"("metadata":{)", R"("metadata":{"uid":"u",)"},
      {R"("timestamp":)", R"("extra":true,"timestamp":)"},
      {R"("containers":[{"name":"c","usage":{"cpu":"5m","memory":"14536Ki"}}],)", ""},
      {R"("containers":[{"name":"c","usage":{"cpu":"5m","memory":"14536Ki"}}],)", R"("containers":null,)"},
      {R"("timestamp":"2026-08-22T10:15:20Z","window":"15s")", R"("window":"15s","timestamp":"2026-08-22T10:15:20Z")"},
      {R"("name":"web","namespace":"default")", R"("name": "web","namespace":"default")"},
      {R"("window":"15s"})", "\"window\":\"15s\"\n}"},
  };
  for (const auto& [from, to] : edits) {
    std::string edited = item;
    if (!from.empty()) {
      const auto at = edited.find(from);
      REQUIRE(at != std::string::npos);
      edited.replace(at, from.size(), to);
    }
    for (const std::string& body : {R"({"apiVersion":"metrics.k8s.io/v1beta1","items":[)" + edited + "]}",
                                    R"({"items":[)" + edited + "," + item + "," + edited + "]}"}) {
      INFO(body);
      const auto prep = preparation();
      auto got = transcode_pod_metrics_list(body, prep);
      REQUIRE(got.has_value());
      check_same(*got, reference(body, prep));
    }
  }
}

TEST_CASE("Encoded list items: a quantity is taken as canonical only where printing it gives the same text",
          "[k8s][encode]") {
  std::mt19937 rng(7);
  static const char* suffixes[] = {"",   "n",  "u",  "m",  "k",  "M",  "G", "T", "P", "E", "Ki",
                                   "Mi", "Gi", "Ti", "Pi", "Ei", "e3", "i", "x", "K", "mi"};
  static const std::uint64_t mantissas[] = {0,    1,    5,    999,     1000,    1024,
                                            1500, 2048, 3072, 1000000, 1048576, 999999999999999};
  int canonical = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    if (round < 252) {
      text = std::to_string(mantissas[round % 12]) + suffixes[round / 12];
    } else {
      const int digits = std::uniform_int_distribution<int>(1, 17)(rng);
      for (int d = 0; d < digits; ++d) text += static_cast<char>('0' + std::uniform_int_distribution<int>(0, 9)(rng));
      if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) text.replace(text.size() - 1, 1, "0");
      if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) text += "000";
      text += suffixes[std::uniform_int_distribution<int>(0, 20)(rng)];
    }
    INFO(text);
    if (!detail::plainly_canonical_quantity(text)) continue;
    ++canonical;
    auto q = Quantity::parse(text);
    REQUIRE(q.ok());
    CHECK(q->to_string() == text);
  }
  CHECK(canonical > 5000);  // the common forms are taken
  for (const char* common : {"2318451n", "14536Ki", "1500m", "0", "5u", "128974848", "3Gi"})
    CHECK(detail::plainly_canonical_quantity(common));
  for (const char* not_canonical : {"5000n", "1024Ki", "1000", "0m", "05m", "1e3", "-5m", "+5m", "1.5", " 5m", "5P"})
    CHECK_FALSE(detail::plainly_canonical_quantity(not_canonical));
}

TEST_CASE("Encoded list items: the transcoder writes the bytes that decoding and encoding each item write",
          "[k8s][encode]") {
  std::mt19937 rng(11);
  // Go's layout (metrics-server's) is written afresh, the encoder's copied.
  for (int round = 0; round < 600; ++round) {
    const int pods = std::uniform_int_distribution<int>(0, 12)(rng);
    const std::string body = round % 2 ? encoder_text(rng, pods) : member_text(rng, pods);
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

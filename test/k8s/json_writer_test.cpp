#include <catch2/catch.hpp>

#include <random>

#include "fedmetrics/k8s/metrics_types.hpp"
#include "k8s/json_writer.hpp"

using namespace fedmetrics::k8s;
using nlohmann::json;

namespace {

// Strings that exercise every escaping rule: quotes, backslashes, every
// control character, DEL, two- to four-byte UTF-8.
std::string random_text(std::mt19937& rng) {
  static const std::vector<std::string> pieces = {"web",
                                                  "-",
                                                  "7d9c",
                                                  "\"",
                                                  "\\",
                                                  "/",
                                                  "\x7f",
                                                  "\xc3\xa9",
                                                  "\xe2\x82\xac",
                                                  "\xf0\x9f\x98\x80",
                                                  " ",
                                                  "app.kubernetes.io/name"};
  std::string out;
  const int n = std::uniform_int_distribution<int>(0, 6)(rng);
  for (int i = 0; i < n; ++i) {
    if (std::uniform_int_distribution<int>(0, 4)(rng) == 0) {
      out.push_back(static_cast<char>(std::uniform_int_distribution<int>(0, 0x1f)(rng)));
    } else {
      out += pieces[std::uniform_int_distribution<std::size_t>(0, pieces.size() - 1)(rng)];
    }
  }
  return out;
}

Labels random_map(std::mt19937& rng) {
  Labels out;
  const int n = std::uniform_int_distribution<int>(0, 3)(rng);
  for (int i = 0; i < n; ++i) out[random_text(rng)] = random_text(rng);
  return out;
}

ResourceList random_usage(std::mt19937& rng) {
  static const std::vector<std::string> quantities = {"0", "5m", "2318451n", "14536Ki", "1.5", "1e3", "128Mi", "100u"};
  ResourceList out;
  for (const char* name : {"cpu", "memory", "ephemeral-storage"}) {
    if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) continue;
    out[name] = *Quantity::parse(quantities[std::uniform_int_distribution<std::size_t>(0, quantities.size() - 1)(rng)]);
  }
  return out;
}

ObjectMeta random_meta(std::mt19937& rng, bool namespaced) {
  ObjectMeta meta;
  meta.name = random_text(rng);
  if (namespaced) meta.namespace_name = random_text(rng);
  meta.labels = random_map(rng);
  meta.annotations = random_map(rng);
  if (std::uniform_int_distribution<int>(0, 3)(rng) != 0)
    meta.creation_timestamp =
        Timestamp(std::chrono::seconds(std::uniform_int_distribution<std::int64_t>(0, 2000000000)(rng)));
  return meta;
}

PodMetrics random_pod(std::mt19937& rng) {
  PodMetrics pod;
  pod.metadata = random_meta(rng, std::uniform_int_distribution<int>(0, 4)(rng) != 0);
  pod.timestamp =
      Timestamp(std::chrono::milliseconds(std::uniform_int_distribution<std::int64_t>(0, 2000000000000)(rng)));
  pod.window = std::chrono::milliseconds(std::uniform_int_distribution<std::int64_t>(0, 60000)(rng));
  const int containers = std::uniform_int_distribution<int>(0, 3)(rng);
  for (int i = 0; i < containers; ++i) pod.containers.push_back({random_text(rng), random_usage(rng)});
  return pod;
}

NodeMetrics random_node(std::mt19937& rng) {
  NodeMetrics node;
  node.metadata = random_meta(rng, false);
  node.timestamp = Timestamp(std::chrono::seconds(std::uniform_int_distribution<std::int64_t>(0, 2000000000)(rng)));
  node.window = std::chrono::milliseconds(std::uniform_int_distribution<std::int64_t>(0, 60000)(rng));
  node.usage = random_usage(rng);
  return node;
}

}  // namespace

TEST_CASE("JsonWriter: escapes exactly as nlohmann's dump()", "[k8s][json]") {
  std::string every_byte_below_0x80;
  for (int c = 0; c < 0x80; ++c) every_byte_below_0x80.push_back(static_cast<char>(c));
  for (const std::string& text :
       {std::string(), every_byte_below_0x80, std::string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
        std::string("a\"b\\c\nd\te\x01")}) {
    std::string out;
    JsonWriter w(out);
    w.string(text);
    CHECK(out == json(text).dump());
  }
}

TEST_CASE("JsonWriter: ill-formed UTF-8 becomes U+FFFD instead of failing", "[k8s][json]") {
  for (const auto& [in, want] : std::vector<std::pair<std::string, std::string>>{
           {"a\xff"
            "b",
            "a\xef\xbf\xbd"
            "b"},
           {"\xc3", "\xef\xbf\xbd"},                                                     // truncated
           {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},                                     // overlong
           {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},                     // a surrogate
           {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}}) {  // past U+10FFFF
    std::string out;
    JsonWriter::escape(out, in);
    CHECK(out == want);
    CHECK_NOTHROW(json::parse("\"" + out + "\""));
  }
}

TEST_CASE("Direct metrics encoders: the same bytes as dumping the documents", "[k8s][json]") {
  std::mt19937 rng(20261122);
  for (int round = 0; round < 200; ++round) {
    std::vector<PodMetrics> pods;
    std::vector<NodeMetrics> nodes;
    const int n = std::uniform_int_distribution<int>(0, 5)(rng);
    for (int i = 0; i < n; ++i) {
      pods.push_back(random_pod(rng));
      nodes.push_back(random_node(rng));
    }
    REQUIRE(encode_pod_metrics_list(pods) == pod_metrics_list_to_json(pods).dump());
    REQUIRE(encode_node_metrics_list(nodes) == node_metrics_list_to_json(nodes).dump());
    for (const auto& p : pods) REQUIRE(encode_pod_metrics(p) == to_json(p).dump());
    for (const auto& nd : nodes) REQUIRE(encode_node_metrics(nd) == to_json(nd).dump());

    // Item by item, then assembled: the same list.
    std::vector<std::string> pod_items, node_items;
    for (const auto& p : pods) pod_items.push_back(encode_pod_metrics_item(p));
    for (const auto& nd : nodes) node_items.push_back(encode_node_metrics_item(nd));
    std::vector<const std::string*> pod_refs, node_refs;
    for (const auto& item : pod_items) pod_refs.push_back(&item);
    for (const auto& item : node_items) node_refs.push_back(&item);
    REQUIRE(assemble_pod_metrics_list(pod_refs) == encode_pod_metrics_list(pods));
    REQUIRE(assemble_node_metrics_list(node_refs) == encode_node_metrics_list(nodes));
  }
}

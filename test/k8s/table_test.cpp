#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/table.hpp"

using namespace fedmetrics::k8s;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr const char* kClusterAnnotation = "resource.karmada.io/query-from-cluster";

const std::vector<AnnotationColumn> kCluster{
    {"Cluster", "The member cluster the metrics came from", kClusterAnnotation}};

Quantity q(const char* text) { return *Quantity::parse(text); }

// A pod of containers, each a cpu and a memory usage ("" leaves one out).
PodMetrics pod(const char* name, std::vector<std::pair<const char*, const char*>> containers,
               std::chrono::nanoseconds window, const char* cluster = "member1") {
  PodMetrics p;
  p.metadata.name = name;
  p.metadata.namespace_name = "default";
  p.metadata.labels = {{"app", "web"}};
  if (*cluster) p.metadata.annotations = {{kClusterAnnotation, cluster}};
  p.metadata.creation_timestamp = Timestamp{std::chrono::sys_seconds{std::chrono::seconds{1700000000}}};
  p.timestamp = Timestamp{std::chrono::sys_seconds{std::chrono::seconds{1700000000}}};
  p.window = window;
  int i = 0;
  for (const auto& [cpu, memory] : containers) {
    ContainerMetrics c;
    c.name = "c" + std::to_string(i++);
    if (*cpu) c.usage["cpu"] = q(cpu);
    if (*memory) c.usage["memory"] = q(memory);
    p.containers.push_back(std::move(c));
  }
  return p;
}

NodeMetrics node(const char* name, const char* cpu, const char* memory, std::chrono::nanoseconds window,
                 const char* cluster) {
  NodeMetrics n;
  n.metadata.name = name;
  n.metadata.annotations = {{kClusterAnnotation, cluster}};
  n.window = window;
  n.usage["cpu"] = q(cpu);
  n.usage["memory"] = q(memory);
  return n;
}

std::vector<std::string> names_of(const Table& table) {
  std::vector<std::string> out;
  for (const auto& c : table.column_definitions) out.push_back(c.name);
  return out;
}

}  // namespace

TEST_CASE("Table: metrics-server's pod columns, then Cluster", "[k8s][table]") {
  auto table = pod_metrics_table({pod("web-1", {{"10m", "5Mi"}}, 1us)}, {}, kCluster);
  const std::vector<TableColumnDefinition> expected{
      {"Name", "string", "name", "Name of the resource", 0},
      {"cpu", "string", "quantity", "", 0},
      {"memory", "string", "quantity", "", 0},
      {"Window", "string", "duration", "", 0},
      {"Cluster", "string", "", "The member cluster the metrics came from", 0},
  };
  CHECK(table.column_definitions == expected);
}

TEST_CASE("Table: pod cells are the containers' sums as canonical Quantities, the window as Go prints it",
          "[k8s][table]") {
  struct Row {
    PodMetrics pod;
    std::vector<std::string> cells;
  };
  const Row rows[] = {
      // metrics-server's own table test values (pkg/api/table_test.go).
      {pod("pod1", {{"10m", "5Mi"}}, 1us), {"pod1", "10m", "5Mi", "1µs", "member1"}},
      {pod("pod2", {{"10m", "5Mi"}, {"10m", "10Mi"}}, 2us), {"pod2", "20m", "15Mi", "2µs", "member1"}},
      // Sums print canonically: 1Gi + 512Mi, nanocores into millicores, 1 + 500m.
      {pod("big", {{"250000000n", "1Gi"}, {"250000000n", "512Mi"}}, 30s, "member2"),
       {"big", "500m", "1536Mi", "30s", "member2"}},
      {pod("mixed", {{"1", "1000k"}, {"500m", "24k"}}, 60s), {"mixed", "1500m", "1024k", "1m0s", "member1"}},
      // The first addend's format stays (Go's Add on the zero Quantity).
      {pod("fmt", {{"100m", "1Mi"}, {"100m", "1000"}}, 10500ms), {"fmt", "200m", "1049576", "10.5s", "member1"}},
      // A container lacking a resource adds nothing; a pod lacking it prints Go's zero Quantity.
      {pod("nomem", {{"7m", ""}, {"3m", ""}}, 15s), {"nomem", "10m", "0", "15s", "member1"}},
      // No annotation: kubectl's <none>.
      {pod("lost", {{"1m", "1Ki"}}, 1s, ""), {"lost", "1m", "1Ki", "1s", "<none>"}},
  };
  for (const auto& row : rows) {
    INFO(row.pod.metadata.name);
    // The first item decides the columns: give it both resources.
    auto table = pod_metrics_table({pod("first", {{"1m", "1Mi"}}, 1s), row.pod}, {}, kCluster);
    REQUIRE(table.rows.size() == 2);
    CHECK(table.rows[1].cells == row.cells);
  }
}

TEST_CASE("Table: the resource columns come from the first item that has usage", "[k8s][table]") {
  PodMetrics empty = pod("starting", {}, 0s);
  auto table = pod_metrics_table({empty, pod("web", {{"5m", "2Mi"}}, 10s)}, {}, kCluster);
  CHECK(names_of(table) == std::vector<std::string>{"Name", "cpu", "memory", "Window", "Cluster"});
  // Every row has a cell per column (metrics-server's first row would be short).
  CHECK(table.rows[0].cells == std::vector<std::string>{"starting", "0", "0", "0s", "member1"});
  CHECK(table.rows[1].cells == std::vector<std::string>{"web", "5m", "2Mi", "10s", "member1"});

  auto none = pod_metrics_table({}, {}, kCluster);
  CHECK(names_of(none) == std::vector<std::string>{"Name", "Window", "Cluster"});
  CHECK(none.rows.empty());
  auto doc = json::parse(encode_table(none));
  CHECK(doc["rows"] == json::array());
}

TEST_CASE("Table: node cells are the usage as it is", "[k8s][table]") {
  auto table = node_metrics_table(
      {node("member1-node-1", "10m", "5Mi", 1us, "member1"), node("member2-node-1", "1", "1048576Ki", 20s, "member2")},
      {}, kCluster);
  CHECK(names_of(table) == std::vector<std::string>{"Name", "cpu", "memory", "Window", "Cluster"});
  CHECK(table.rows[0].cells == std::vector<std::string>{"member1-node-1", "10m", "5Mi", "1µs", "member1"});
  CHECK(table.rows[1].cells == std::vector<std::string>{"member2-node-1", "1", "1Gi", "20s", "member2"});
}

TEST_CASE("Table: includeObject chooses each row's object", "[k8s][table]") {
  const PodMetrics p = pod("web-1", {{"10m", "5Mi"}}, 30s);
  SECTION("Metadata (the default): a PartialObjectMetadata in the Table's group version") {
    for (auto version : {TableVersion::V1, TableVersion::V1beta1}) {
      auto doc = json::parse(encode_table(pod_metrics_table({p}, {version, IncludeObject::Metadata}, kCluster)));
      const auto& object = doc["rows"][0]["object"];
      CHECK(object["kind"] == "PartialObjectMetadata");
      CHECK(object["apiVersion"] == std::string(group_version(version)));
      CHECK(object["metadata"] == to_json(p.metadata));
      CHECK(object.size() == 3);
    }
  }
  SECTION("Object: the whole PodMetrics with its kind and apiVersion") {
    auto doc = json::parse(encode_table(pod_metrics_table({p}, {TableVersion::V1, IncludeObject::Object}, kCluster)));
    CHECK(doc["rows"][0]["object"] == to_json(p));
    CHECK(doc["rows"][0]["object"]["kind"] == "PodMetrics");
    auto nodes = json::parse(encode_table(node_metrics_table({node("n", "1m", "1Mi", 1s, "member3")},
                                                             {TableVersion::V1, IncludeObject::Object}, kCluster)));
    CHECK(nodes["rows"][0]["object"]["kind"] == "NodeMetrics");
    CHECK(nodes["rows"][0]["object"]["apiVersion"] == "metrics.k8s.io/v1beta1");
  }
  SECTION("None: null, as Go writes an empty RawExtension") {
    auto doc = json::parse(encode_table(pod_metrics_table({p}, {TableVersion::V1, IncludeObject::None}, kCluster)));
    CHECK(doc["rows"][0].contains("object"));
    CHECK(doc["rows"][0]["object"].is_null());
  }
}

TEST_CASE("Table: the document as kube-apiserver writes it", "[k8s][table]") {
  auto text = encode_table(pod_metrics_table({pod("web-1", {{"10m", "5Mi"}}, 30s, "member2")},
                                             {TableVersion::V1beta1, IncludeObject::None}, kCluster));
  // Go's field order: TypeMeta, ListMeta, columnDefinitions, rows.
  CHECK(text.rfind(R"({"kind":"Table","apiVersion":"meta.k8s.io/v1beta1","metadata":{},"columnDefinitions":[)", 0) ==
        0);
  CHECK(text.find(
            R"({"name":"Name","type":"string","format":"name","description":"Name of the resource","priority":0})") !=
        std::string::npos);
  CHECK(text.find(R"("rows":[{"cells":["web-1","10m","5Mi","30s","member2"],"object":null}]})") != std::string::npos);
  auto doc = json::parse(text);
  CHECK(doc.size() == 5);
  CHECK(doc["metadata"] == json::object());
}

TEST_CASE("Table: includeObject values as apimachinery validates them", "[k8s][table]") {
  CHECK(*parse_include_object("") == IncludeObject::Metadata);
  CHECK(*parse_include_object("Metadata") == IncludeObject::Metadata);
  CHECK(*parse_include_object("None") == IncludeObject::None);
  CHECK(*parse_include_object("Object") == IncludeObject::Object);
  for (const char* bad : {"object", "all", "Metadata "}) {
    auto r = parse_include_object(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "Unable to convert to Table as requested: includeObject: Unsupported value: \"" +
                                   std::string(bad) + "\": supported values: \"Metadata\", \"None\", \"Object\"");
  }
}

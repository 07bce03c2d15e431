#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "fedmetrics/plugin/top_printer.hpp"

using namespace fedmetrics;
using namespace fedmetrics::plugin;

namespace {

k8s::Quantity q(const char* text) { return k8s::Quantity::parse(text).value(); }

k8s::PodMetrics pod(const char* ns, const char* name, const char* cluster,
                    std::vector<std::tuple<const char*, const char*, const char*>> containers) {
  k8s::PodMetrics p;
  p.metadata.name = name;
  p.metadata.namespace_name = ns;
  if (*cluster) p.metadata.annotations["resource.karmada.io/query-from-cluster"] = cluster;
  for (auto [c, cpu, memory] : containers) {
    k8s::ContainerMetrics m{c, {}};
    if (*cpu) m.usage.emplace("cpu", q(cpu));
    if (*memory) m.usage.emplace("memory", q(memory));
    p.containers.push_back(std::move(m));
  }
  return p;
}

k8s::NodeMetrics node(const char* name, const char* cluster, const char* cpu, const char* memory) {
  k8s::NodeMetrics n;
  n.metadata.name = name;
  n.metadata.annotations["resource.karmada.io/query-from-cluster"] = cluster;
  n.usage = {{"cpu", q(cpu)}, {"memory", q(memory)}};
  return n;
}

NodeInfo info(const char* name, const char* cpu, const char* memory, k8s::Labels labels = {}) {
  return NodeInfo{name, std::move(labels), {{"cpu", q(cpu)}, {"memory", q(memory)}}};
}

// Options spelt out (designated initializers that leave members out warn with GCC 12).
PodTableOptions pod_options(bool all_namespaces, bool containers, bool no_headers, SortBy sort_by = SortBy::Name) {
  PodTableOptions o;
  o.all_namespaces = all_namespaces;
  o.containers = containers;
  o.no_headers = no_headers;
  o.sort_by = sort_by;
  return o;
}

NodeTableOptions node_options(bool no_headers, SortBy sort_by = SortBy::Name, std::string name = {},
                              k8s::LabelSelector selector = {}) {
  NodeTableOptions o;
  o.no_headers = no_headers;
  o.sort_by = sort_by;
  o.name = std::move(name);
  o.selector = std::move(selector);
  return o;
}

}  // namespace

TEST_CASE("top: --sort-by takes cpu or memory, as kubectl", "[plugin][top]") {
  CHECK(*parse_sort_by("") == SortBy::Name);
  CHECK(*parse_sort_by("cpu") == SortBy::Cpu);
  CHECK(*parse_sort_by("memory") == SortBy::Memory);
  for (const char* bad : {"CPU", "mem", "name"}) {
    auto parsed = parse_sort_by(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message == "--sort-by accepts only cpu or memory");
  }
}

TEST_CASE("top: columns as Go's tabwriter pads them for kubectl (min 6, padding 3, last column too)", "[plugin][top]") {
  CHECK(tabulate({}) == "");
  // Each column is max(6, widest + 3) wide: 4 + 3 = 7, then the minimum 6.
  CHECK(tabulate({{"A", "BB"}, {"CCCC", ""}}) ==
        "A      BB    \n"
        "CCCC         \n");
  CHECK(tabulate({{"NAME", "CPU(cores)"}, {"a-long-pod-name", "5m"}}) ==
        "NAME              CPU(cores)   \n"
        "a-long-pod-name   5m           \n");
  // Widths count code points, not bytes.
  CHECK(tabulate({{"\xc3\xa9t\xc3\xa9", "x"}, {"abc", "y"}}) == "\xc3\xa9t\xc3\xa9   x     \nabc   y     \n");
}

TEST_CASE("top: cells as kubectl prints them", "[plugin][top]") {
  struct Row {
    const char* quantity;
    const char* cpu;
    const char* memory;
  };
  for (auto [text, cpu, memory] : std::vector<Row>{
           {"0", "0m", "0Mi"},
           {"1", "1000m", "0Mi"},
           {"250m", "250m", "0Mi"},
           {"1500001n", "2m", "0Mi"},  // MilliValue rounds up
           {"1048575", "1048575000m", "0Mi"},
           {"1048576", "1048576000m", "1Mi"},
           {"1536Mi", "1610612736000m", "1536Mi"},
           {"2Gi", "2147483648000m", "2048Mi"},
           {"3000k", "3000000000m", "2Mi"},  // integer division
       }) {
    INFO(text);
    CHECK(format_cpu(q(text)) == cpu);
    CHECK(format_memory(q(text)) == memory);
  }
  struct Share {
    const char* usage;
    const char* available;
    const char* percent;
  };
  for (auto [usage, available, percent] : std::vector<Share>{
           {"1", "4", "25%"},
           {"333m", "1", "33%"},  // truncated
           {"999m", "1", "99%"},
           {"5", "4", "125%"},  // over 100 % is shown as is
           {"1Gi", "0", "0%"},  // nothing available: 0 %, as kubectl
           {"0", "8Gi", "0%"},
           {"7680Mi", "16Gi", "46%"},
           {"8000T", "1m", "<unknown>"},  // past int64 in percent: Go prints garbage, C++ would be undefined
       }) {
    INFO(usage << " of " << available);
    CHECK(format_percent(q(usage), q(available)) == percent);
  }
}

TEST_CASE("top pod: kubectl's columns and the member of each pod", "[plugin][top]") {
  std::vector<k8s::PodMetrics> pods{
      pod("default", "web-2", "member2", {{"nginx", "30m", "64Mi"}}),
      pod("default", "web-1", "member1", {{"nginx", "10m", "20Mi"}, {"sidecar", "5m", "8Mi"}}),
      pod("default", "web-1", "member3", {{"nginx", "40m", "10Mi"}}),  // the same name in another member
  };
  CHECK(format_pod_table(pods, {}) ==
        "NAME    CLUSTER   CPU(cores)   MEMORY(bytes)   \n"
        "web-1   member1   15m          28Mi            \n"
        "web-1   member3   40m          10Mi            \n"
        "web-2   member2   30m          64Mi            \n");
  CHECK(format_pod_table(pods, pod_options(false, false, true, SortBy::Cpu)) ==
        "web-1   member3   40m   10Mi   \n"
        "web-2   member2   30m   64Mi   \n"
        "web-1   member1   15m   28Mi   \n");
  CHECK(format_pod_table(pods, pod_options(false, false, true, SortBy::Memory)) ==
        "web-2   member2   30m   64Mi   \n"
        "web-1   member1   15m   28Mi   \n"
        "web-1   member3   40m   10Mi   \n");
  CHECK(format_pod_table({}, {}) == "");  // no pods: nothing, not even headers
}

TEST_CASE("top pod -A: namespaces first, sorted by namespace then name", "[plugin][top]") {
  std::vector<k8s::PodMetrics> pods{
      pod("kube-system", "a", "member1", {{"c", "1m", "1Mi"}}),
      pod("default", "z", "member1", {{"c", "2m", "2Mi"}}),
      pod("default", "b", "member2", {{"c", "3m", "3Mi"}}),
  };
  CHECK(format_pod_table(pods, pod_options(true, false, false)) ==
        "NAMESPACE     NAME   CLUSTER   CPU(cores)   MEMORY(bytes)   \n"
        "default       b      member2   3m           3Mi             \n"
        "default       z      member1   2m           2Mi             \n"
        "kube-system   a      member1   1m           1Mi             \n");
  // Without -A kubectl sorts by name alone.
  CHECK(format_pod_table(pods, pod_options(false, false, true)) ==
        "a     member1   1m    1Mi   \n"
        "b     member2   3m    3Mi   \n"
        "z     member1   2m    2Mi   \n");
}

TEST_CASE("top pod --containers: a row per container under its pod", "[plugin][top]") {
  std::vector<k8s::PodMetrics> pods{
      pod("default", "web-1", "member1", {{"sidecar", "5m", "8Mi"}, {"nginx", "10m", ""}}),
      pod("default", "api", "", {{"app", "", "1Gi"}}),  // not from fedmetrics: no member annotation
  };
  CHECK(format_pod_table(pods, pod_options(false, true, false)) ==
        "POD     NAME      CLUSTER   CPU(cores)   MEMORY(bytes)   \n"
        "api     app       <none>    0m           1024Mi          \n"
        "web-1   nginx     member1   10m          0Mi             \n"
        "web-1   sidecar   member1   5m           8Mi             \n");
  CHECK(format_pod_table(pods, pod_options(true, true, true, SortBy::Cpu)) ==
        "default   web-1   nginx     member1   10m   0Mi      \n"
        "default   web-1   sidecar   member1   5m    8Mi      \n"
        "default   api     app       <none>    0m    1024Mi   \n");
}

TEST_CASE("top node: shares of each member's own node allocatable", "[plugin][top]") {
  std::vector<k8s::NodeMetrics> metrics{
      node("node-1", "member2", "500m", "2Gi"),
      node("node-1", "member1", "1", "1Gi"),  // the same node name in two members
      node("edge-1", "member3", "250m", "512Mi"),
  };
  MemberNodes nodes;
  nodes["member1"] = std::vector<NodeInfo>{info("node-1", "4", "8Gi"), info("node-2", "4", "8Gi", {{"zone", "b"}})};
  nodes["member2"] = std::vector<NodeInfo>{info("node-1", "2", "4Gi")};
  nodes["member3"] = std::nullopt;  // its nodes could not be read
  CHECK(format_node_table(metrics, nodes, {}) ==
        "NAME     CLUSTER   CPU(cores)   CPU(%)      MEMORY(bytes)   MEMORY(%)   \n"
        "edge-1   member3   250m         <unknown>   512Mi           <unknown>   \n"
        "node-1   member1   1000m        25%         1024Mi          12%         \n"
        "node-1   member2   500m         25%         2048Mi          50%         \n"
        // listed by member1 without metrics: all unknown, as kubectl prints such nodes
        "node-2   member1   <unknown>    <unknown>   <unknown>       <unknown>   \n");
  CHECK(format_node_table(metrics, nodes, node_options(true, SortBy::Memory)) ==
        "node-1   member2   500m        25%         2048Mi      50%         \n"
        "node-1   member1   1000m       25%         1024Mi      12%         \n"
        "edge-1   member3   250m        <unknown>   512Mi       <unknown>   \n"
        "node-2   member1   <unknown>   <unknown>   <unknown>   <unknown>   \n");
}

TEST_CASE("top node: nodes without metrics only when the name or selector takes them", "[plugin][top]") {
  std::vector<k8s::NodeMetrics> metrics{node("node-1", "member1", "1", "1Gi")};
  MemberNodes nodes;
  nodes["member1"] =
      std::vector<NodeInfo>{info("node-1", "4", "4Gi", {{"zone", "a"}}), info("node-2", "4", "4Gi", {{"zone", "b"}})};
  nodes["member2"] = std::vector<NodeInfo>{info("node-9", "4", "4Gi", {{"zone", "b"}})};
  auto selector = [](const char* text) { return k8s::LabelSelector::parse(text).value(); };
  auto names = [&](std::string name, k8s::LabelSelector selector) {
    auto options = node_options(true, SortBy::Name, std::move(name), std::move(selector));
    std::string table = format_node_table(metrics, nodes, options), out;
    for (std::size_t at = 0; at < table.size(); at = table.find('\n', at) + 1)
      out += table.substr(at, table.find_first_of(" ", at) - at) + ",";
    return out;
  };
  CHECK(names("", {}) == "node-1,node-2,node-9,");
  CHECK(names("node-1", {}) == "node-1,");
  CHECK(names("", selector("zone=b")) == "node-1,node-2,node-9,");  // node-1 came from the server
  CHECK(names("", selector("fedmetrics/cluster=member2")) == "node-1,node-9,");
  CHECK(names("", selector("zone=b,fedmetrics/cluster!=member2")) == "node-1,node-2,");
  CHECK(format_node_table({}, nodes, {}) == "");
}

TEST_CASE("top node: a NodeList's allocatable, decoded", "[plugin][top]") {
  auto list = node_list_from_json(nlohmann::json::parse(R"({"kind":"NodeList","items":[
    {"metadata":{"name":"n1","labels":{"zone":"a"}},"status":{"allocatable":{"cpu":"3920m","memory":"15Gi","pods":"110"}}},
    {"metadata":{"name":"n2"}}]})"));
  REQUIRE(list.ok());
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].name == "n1");
  CHECK((*list)[0].labels.at("zone") == "a");
  CHECK((*list)[0].allocatable.at("cpu") == q("3920m"));
  CHECK((*list)[1].allocatable.empty());
  CHECK(node_list_from_json(nlohmann::json::parse(R"({"items":null})"))->empty());
  auto bad = node_list_from_json(
      nlohmann::json::parse(R"({"items":[{"metadata":{"name":"n"},"status":{"allocatable":{"cpu":"lots"}}}]})"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.starts_with("items[0].status.allocatable.cpu: "));
  CHECK_FALSE(node_list_from_json(nlohmann::json::parse(R"({"items":{}})")).ok());
  CHECK_FALSE(node_list_from_json(nlohmann::json::parse("[]")).ok());
}

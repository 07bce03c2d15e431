// `fedmetrics simulate`: every shipped example scenario, the output contract
// (docs/simulate.md) and malformed files.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/simulate.hpp"

// CMake defines the source tree; a hand-made build run from it works too.
#ifndef FEDMETRICS_SOURCE_DIR
#define FEDMETRICS_SOURCE_DIR "."
#endif

namespace fedmetrics::autoscaler {
namespace {

using nlohmann::json;

struct Run {
  int exit = -1;
  std::string out;
  std::string err;
  std::vector<json> lines;
};

Run simulate_text(const std::string& text) {
  std::istringstream in(text);
  std::ostringstream out;
  std::ostringstream err;
  Run run;
  run.exit = run_simulate(in, out, err);
  run.out = out.str();
  run.err = err.str();
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) run.lines.push_back(json::parse(line));
  return run;
}

std::filesystem::path examples_dir() { return std::filesystem::path(FEDMETRICS_SOURCE_DIR) / "examples" / "scenarios"; }

Run simulate_file(const std::filesystem::path& path) {
  std::ifstream file(path);
  REQUIRE(file.good());
  std::stringstream text;
  text << file.rdbuf();
  return simulate_text(text.str());
}

std::vector<int> desired(const Run& run) {
  std::vector<int> out;
  for (const auto& line : run.lines) out.push_back(line.at("desiredReplicas").get<int>());
  return out;
}

std::string reason(const json& line, const std::string& type) {
  for (const auto& c : line.at("conditions")) {
    if (c.at("type") == type) return c.at("reason").get<std::string>();
  }
  return "";
}

TEST_CASE("simulate: every example scenario runs and prints one line per step", "[autoscaler][simulate]") {
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(examples_dir())) {
    if (entry.path().extension() != ".json") continue;
    ++count;
    INFO(entry.path().filename().string());
    std::ifstream file(entry.path());
    const json scenario = json::parse(file);
    Run run = simulate_file(entry.path());
    CHECK(run.exit == 0);
    REQUIRE(run.lines.size() == scenario.at("steps").size());
    const bool distributed = scenario.value("mode", "") == "distributed";
    for (std::size_t i = 0; i < run.lines.size(); ++i) {
      const json& line = run.lines[i];
      CHECK(line.at("at") == scenario["steps"][i].at("at"));
      CHECK(line.contains("currentReplicas"));
      CHECK(line.at("conditions").is_array());
      if (distributed) {  // distributed mode's output shape
        CHECK(line.at("members").is_object());
        CHECK(line.at("moves").is_array());
      } else {
        CHECK(line.at("currentMetrics").is_array());
        CHECK(line.at("clusters").is_object());
      }
    }
  }
  CHECK(count >= 5);
}

TEST_CASE("simulate: Karmada walkthrough, cpu utilization on nginx", "[autoscaler][simulate]") {
  Run run = simulate_file(examples_dir() / "karmada-nginx-cpu.json");
  REQUIRE(run.exit == 0);
  // 1 -> 5 (+4 pods per 15 s) -> 10 (maxReplicas) -> held 5 s after the load
  // stops (scale-down window 10 s) -> 1 (minReplicas)
  CHECK(desired(run) == std::vector<int>{1, 5, 10, 10, 10, 1, 1});
  CHECK(reason(run.lines[1], "ScalingLimited") == "ScaleUpLimit");
  CHECK(reason(run.lines[2], "ScalingLimited") == "TooManyReplicas");
  CHECK(reason(run.lines[4], "AbleToScale") == "ScaleDownStabilized");
  CHECK(reason(run.lines[5], "ScalingLimited") == "TooFewReplicas");
  CHECK(reason(run.lines[5], "AbleToScale") == "SucceededRescale");
  CHECK(
      run.lines[1].at("currentMetrics") ==
      json::parse(
          R"([{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":1200,"averageValue":"300m"}}}])"));
  CHECK(run.lines[3].at("clusters") ==
        json::parse(R"({"member1":{"pods":5,"readyPods":5},"member2":{"pods":5,"readyPods":5}})"));
}

TEST_CASE("simulate: Karmada walkthrough, http_requests on sample-app", "[autoscaler][simulate]") {
  Run run = simulate_file(examples_dir() / "karmada-sample-app-http-requests.json");
  REQUIRE(run.exit == 0);
  // 5 req/s against 700m per pod: ceil(5 / 0.7) = 8
  CHECK(desired(run) == std::vector<int>{1, 5, 8, 8, 8, 1});
  CHECK(run.lines[2].at("currentMetrics")[0].at("pods").at("current").at("averageValue") == "1");
  CHECK(reason(run.lines[2], "ScalingActive") == "ValidMetricFound");
  CHECK(reason(run.lines[4], "AbleToScale") == "ScaleDownStabilized");
}

TEST_CASE("simulate: example External metric scales to zero and back", "[autoscaler][simulate]") {
  Run run = simulate_file(examples_dir() / "external-queue-scale-to-zero.json");
  REQUIRE(run.exit == 0);
  CHECK(run.err.empty());  // minReplicas 0 with only External metrics: no warning
  CHECK(desired(run) == std::vector<int>{0, 3, 3, 0, 2});
  CHECK(reason(run.lines[0], "ScalingActive") == "ValidMetricFound");
  // The autoscaler's own zero (hpa.status.conditions), woken, made again and woken again.
  std::vector<std::string> zero;
  for (const auto& line : run.lines) zero.push_back(reason(line, "ScaledToZero"));
  CHECK(zero == std::vector<std::string>{"ScaledToZero", "NotScaledToZero", "NotScaledToZero", "ScaledToZero",
                                         "NotScaledToZero"});

  // Without the condition the first zero is an operator's: left alone, whatever the queue.
  std::ifstream file(examples_dir() / "external-queue-scale-to-zero.json");
  json scenario = json::parse(file);
  scenario["hpa"].erase("status");
  Run manual = simulate_text(scenario.dump());
  REQUIRE(manual.exit == 0);
  CHECK(desired(manual) == std::vector<int>{0, 0, 0, 0, 0});
  CHECK(reason(manual.lines[1], "ScalingActive") == "ScalingDisabled");
  CHECK(reason(manual.lines[1], "ScaledToZero").empty());
}

TEST_CASE("simulate: example StatefulSet with the same pod names in two members", "[autoscaler][simulate]") {
  Run run = simulate_file(examples_dir() / "statefulset-same-pod-names.json");
  REQUIRE(run.exit == 0);
  CHECK(desired(run) == std::vector<int>{4, 7});
  CHECK(run.lines[0].at("currentMetrics")[0].at("resource").at("current").at("averageUtilization") == 50);
  CHECK(run.lines[0].at("clusters") ==
        json::parse(R"({"member1":{"pods":2,"readyPods":2},"member2":{"pods":2,"readyPods":2}})"));
}

TEST_CASE("simulate: example scale-down policies", "[autoscaler][simulate]") {
  Run run = simulate_file(examples_dir() / "scale-down-policies.json");
  REQUIRE(run.exit == 0);
  // 2 pods or 10 % per 60 s, the bigger change: 8 -> 6, wait, 6 -> 4, wait, 4 -> 2
  CHECK(desired(run) == std::vector<int>{6, 6, 4, 4, 2});
  CHECK(reason(run.lines[1], "ScalingLimited") == "ScaleDownLimit");
  CHECK(reason(run.lines[4], "ScalingLimited") == "TooFewReplicas");
}

TEST_CASE("simulate: example several members, calibration and incomplete data", "[autoscaler][simulate]") {
  Run run = simulate_file(examples_dir() / "several-members-incomplete-data.json");
  REQUIRE(run.exit == 0);
  // held (unread member3), held (queue_depth misses member3), 1 (calibrated,
  // not 3), 3 (an incomplete value may scale up)
  CHECK(desired(run) == std::vector<int>{2, 2, 1, 3});
  auto active_message = [&](std::size_t i) {
    for (const auto& c : run.lines[i].at("conditions"))
      if (c.at("type") == "ScalingActive") return c.at("message").get<std::string>();
    return std::string();
  };
  CHECK_THAT(active_message(0), Catch::Contains("pods of member3 could not be read"));
  CHECK_THAT(active_message(1), Catch::Contains("misses member3"));
  CHECK_THAT(active_message(2), !Catch::Contains("incomplete"));
  CHECK_THAT(active_message(3), Catch::Contains("misses member2"));
  // The incomplete value is still reported: 3 + 2 of member1 and member2.
  CHECK(run.lines[1].at("currentMetrics")[1].at("external").at("current").at("value") == "5");
  // The unread member's pods are not listed pods.
  CHECK(run.lines[0].at("clusters").size() == 2);
}

TEST_CASE("simulate: example overflow affinities fill, spill and reclaim", "[autoscaler][simulate]") {
  Run run = simulate_file(examples_dir() / "overflow-affinities.json");
  REQUIRE(run.exit == 0);
  CHECK(desired(run) == std::vector<int>{4, 8, 8, 4, 4, 8, 8});
  std::vector<json> placed;
  for (const auto& line : run.lines) placed.push_back(line.at("placement").at("clusters"));
  CHECK(placed == std::vector<json>{json::parse(R"({"member1":2})"), json::parse(R"({"member1":4})"),
                                    json::parse(R"({"cloud1":4,"member1":4})"),
                                    json::parse(R"({"cloud1":4,"member1":4})"), json::parse(R"({"member1":4})"),
                                    json::parse(R"({"member1":4})"), json::parse(R"({"member1":4})")});
  for (std::size_t i = 0; i + 1 < run.lines.size(); ++i)
    CHECK_FALSE(run.lines[i].at("placement").contains("unschedulable"));
  CHECK(run.lines[6].at("placement").at("unschedulable") ==
        "the clusters can hold 6 of 8 replicas: not enough available replicas to schedule");
  CHECK(reason(run.lines[5], "ScalingLimited") == "ScaleUpLimit");
}

const char* kHpa = R"("hpa": {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 10,
  "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]}})";

std::string scenario(const std::string& steps, const std::string& extra = "") {
  return std::string("{") + kHpa + extra + R"(, "steps": )" + steps + "}";
}

const char* kPod =
    R"({"name": "web-1", "containers": [{"name": "app", "requests": {"cpu": "100m"}}], "usage": {"cpu": "80m"}})";

TEST_CASE("simulate: a placement's groups and what it refuses", "[autoscaler][simulate]") {
  const std::string pod = kPod;
  SECTION("a scenario without a placement has no placement in its lines") {
    Run run = simulate_text(scenario(R"([{"at": 0, "replicas": 1, "pods": [)" + pod + "]}]"));
    REQUIRE(run.exit == 0);
    CHECK_FALSE(run.lines[0].contains("placement"));
  }
  SECTION("a group with no room is passed over") {
    Run run = simulate_text(
        scenario(R"([{"at": 0, "replicas": 2, "pods": [)" + pod + "]}]",
                 R"(, "placement": {"affinityName": "a", "clusterNames": ["b"], "availableReplicas": {"b": 0},
             "overflowAffinities": [{"affinityName": "o", "clusterNames": ["c"]}]})"));
    REQUIRE(run.exit == 0);
    CHECK(run.lines[0].at("placement").at("clusters") == json::parse(R"({"c":2})"));
  }
  SECTION("the calibration follows the placement Karmada keeps when the replicas do not fit") {
    // 4 replicas do not fit in b (room for 1): the placement stays b=1, the
    // calibration is 1 / 4, and 1 pod at 80 % of its request (ratio 1.6)
    // makes ceil(1.6 x 1 / 0.25) = 7, where 1.6 x 1 would make 2.
    Run run = simulate_text(scenario(
        R"([{"at": 0, "replicas": 1, "pods": [)" + pod + R"(]}, {"at": 15, "replicas": 4, "pods": [)" + pod + "]}]",
        R"(, "placement": {"affinityName": "a", "clusterNames": ["b"], "availableReplicas": {"b": 1}})"));
    REQUIRE(run.exit == 0);
    CHECK(run.lines[1].at("placement").at("clusters") == json::parse(R"({"b":1})"));
    CHECK(run.lines[1].at("placement").at("unschedulable") ==
          "the clusters can hold 1 of 4 replicas: not enough available replicas to schedule");
    CHECK(run.lines[1].at("desiredReplicas") == 7);
  }
  struct Bad {
    std::string extra;
    std::string step;
    std::string error;
  };
  const Bad bad[] = {
      {R"(, "placement": {"clusterNames": ["a"]})", "", "placement.affinityName: is required"},
      {R"(, "placement": {"affinityName": "a"})", "", "placement.clusterNames: must name at least one cluster"},
      {R"(, "placement": {"affinityName": "a", "clusterNames": ["m"], "overflowAffinities": [{"affinityName": "a", "clusterNames": ["n"]}]})",
       "", "placement.overflowAffinities[0].affinityName: \"a\" names an earlier group"},
      {R"(, "placement": {"affinityName": "a", "clusterNames": ["m"], "availableReplicas": {"m": -1}})", "",
       "placement.availableReplicas.m: must not be negative"},
      {R"(, "placement": {"affinityName": "a", "clusterNames": ["m"], "weights": {}})", "",
       "placement.weights: unknown field"},
      {R"(, "placement": {"affinityName": "a", "clusterNames": ["m"]})", R"(, "memberReplicas": {"m": 1})",
       "steps[0].memberReplicas: the scenario's placement schedules the members' replicas: give one or the other"},
      {"", R"(, "availableReplicas": {"m": 1})", "steps[0].availableReplicas: needs the scenario's placement"},
  };
  for (const auto& b : bad) {
    INFO(b.extra + b.step);
    Run run = simulate_text(scenario(R"([{"at": 0, "replicas": 1)" + b.step + "}]", b.extra));
    CHECK(run.exit == 2);
    CHECK(run.out.empty());
    CHECK_THAT(run.err, Catch::StartsWith(b.error));
  }
}

TEST_CASE("simulate: the step rules of a scenario file", "[autoscaler][simulate]") {
  SECTION("replicas carry over from the previous decision, statusReplicas default to replicas") {
    // one pod at 80 % of 50 % -> 2; next step starts from 2
    Run run = simulate_text(scenario(std::string("[{\"at\": 0, \"replicas\": 1, \"pods\": [") + kPod + "]}, " +
                                     "{\"at\": 15, \"pods\": [" + kPod + "]}]"));
    REQUIRE(run.exit == 0);
    CHECK(desired(run) == std::vector<int>{2, 2});
    CHECK(run.lines[1].at("currentReplicas") == 2);
  }
  SECTION("defaults: cluster default, Running, Ready") {
    Run run = simulate_text(scenario(std::string("[{\"at\": 0, \"replicas\": 1, \"pods\": [") + kPod + "]}]"));
    CHECK(run.lines[0].at("clusters") == json::parse(R"({"default":{"pods":1,"readyPods":1}})"));
  }
  SECTION("times as RFC 3339 strings or seconds; a fresh Ready transition leaves a cpu sample out") {
    // started 60 s before the step, Ready 20 s before: within the 300 s cpu
    // initialization period the 60 s sample window began before the
    // transition, so the pod is unready; with no ready pod -> error, keep 1
    const std::string pod =
        R"({"name": "web-1", "startTime": "2024-01-01T00:09:00Z", "readyTransitionTime": 580,
            "containers": [{"name": "app", "requests": {"cpu": "100m"}}], "usage": {"cpu": "80m"}})";
    Run run = simulate_text(scenario("[{\"at\": 600, \"replicas\": 1, \"pods\": [" + pod + "]}]"));
    REQUIRE(run.exit == 0);
    CHECK(desired(run) == std::vector<int>{1});
    CHECK(reason(run.lines[0], "ScalingActive") == "FailedGetResourceMetric");
    // the same pod with a 10 s window stamped 30 s after the transition counts
    const std::string fresh =
        R"({"name": "web-1", "startTime": 540, "readyTransitionTime": 580, "usageTimestamp": 600, "usageWindowSeconds": 10,
            "containers": [{"name": "app", "requests": {"cpu": "100m"}}], "usage": {"cpu": "80m"}})";
    Run counted = simulate_text(scenario("[{\"at\": 600, \"replicas\": 1, \"pods\": [" + fresh + "]}]"));
    CHECK(desired(counted) == std::vector<int>{2});
  }
  SECTION("a step whose metrics fail is still evaluated") {
    Run run = simulate_text(scenario(R"([{"at": 0, "replicas": 3}])"));
    REQUIRE(run.exit == 0);
    CHECK(desired(run) == std::vector<int>{3});
    CHECK(run.lines[0].at("currentMetrics").empty());
    CHECK(reason(run.lines[0], "ScalingActive") == "FailedGetResourceMetric");
  }
  SECTION("config settings are used") {
    // tolerance 0.7: 80 % vs 50 % (1.6) is within
    Run run = simulate_text(scenario(std::string("[{\"at\": 0, \"replicas\": 1, \"pods\": [") + kPod + "]}]",
                                     R"(, "config": {"tolerance": 0.7})"));
    CHECK(desired(run) == std::vector<int>{1});
  }
  SECTION("memberReplicas, unreadMembers and missingMembers are read") {
    // 4 pods listed at 10 %: 2 unread replicas in member2 are missing pods,
    // which hold the count at 4 ((40 + 200) / 600 = 40 %, ceil(0.8 x 6 / 1.5) = 4).
    std::string pods;
    for (int i = 0; i < 4; ++i) {
      pods +=
          std::string(i ? ", " : "") + R"({"name": "web-)" + std::to_string(i) +
          R"(", "cluster": "member1", "containers": [{"name": "app", "requests": {"cpu": "100m"}}], "usage": {"cpu": "10m"}})";
    }
    const std::string step = R"([{"at": 0, "replicas": 4, "memberReplicas": {"member1": 4, "member2": 2},
        "unreadMembers": {"member2": {"replicas": 2}}, "pods": [)" +
                             pods + "]}]";
    Run run = simulate_text(scenario(step, R"(, "config": {"downscaleStabilizationSeconds": 0})"));
    REQUIRE(run.exit == 0);
    CHECK(desired(run) == std::vector<int>{4});
    // The same without unreadMembers: 4 pods at 0.2 of the target, calibration 1.5 -> 1.
    const std::string read_all = R"([{"at": 0, "replicas": 4, "memberReplicas": {"member1": 4, "member2": 2},
        "pods": [)" + pods + "]}]";
    Run scaled = simulate_text(scenario(read_all, R"(, "config": {"downscaleStabilizationSeconds": 0})"));
    CHECK(desired(scaled) == std::vector<int>{1});
  }
  SECTION("a pod's pod-level requests replace its containers' in the utilization") {
    // containers 100m: 80m is 80 % of 50 % -> 2; pod-level 400m: 20 % -> 1
    const std::string pod_level =
        R"({"name": "web-1", "resources": {"requests": {"cpu": "400m"}},
            "containers": [{"name": "app", "requests": {"cpu": "100m"}}], "usage": {"cpu": "80m"}})";
    Run run = simulate_text(scenario("[{\"at\": 0, \"replicas\": 1, \"pods\": [" + pod_level + "]}]"));
    REQUIRE(run.exit == 0);
    CHECK(desired(run) == std::vector<int>{1});
    CHECK(run.lines[0].at("currentMetrics")[0].at("resource").at("current").at("averageUtilization") == 20);
    // A container without requests counts nothing once the pod has them.
    const std::string bare =
        R"({"name": "web-1", "resources": {"requests": {"cpu": "40m"}}, "containers": [{"name": "app"}], "usage": {"cpu": "80m"}})";
    Run counted = simulate_text(scenario("[{\"at\": 0, \"replicas\": 1, \"pods\": [" + bare + "]}]"));
    CHECK(desired(counted) == std::vector<int>{4});
  }
  SECTION("minReplicas 0 without Object or External metrics is evaluated with a warning") {
    const std::string text = std::string(R"({"hpa": {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
      "minReplicas": 0, "maxReplicas": 10, "metrics": [{"type": "Resource", "resource": {"name": "cpu",
      "target": {"type": "Utilization", "averageUtilization": 50}}}]}}, "steps": [{"at": 0, "replicas": 1, "pods": [)") +
                             kPod + "]}]}";
    Run run = simulate_text(text);
    CHECK(run.exit == 0);
    CHECK_THAT(run.err, Catch::Contains("warning") && Catch::Contains("minReplicas 0"));
    CHECK(desired(run) == std::vector<int>{2});
  }
}

// A file that breaks the contract: exit 2, the field named on stderr, nothing on stdout.
struct Malformed {
  std::string name;
  std::string text;
  std::string error;
};

void check_rejected(const std::vector<Malformed>& cases) {
  for (const auto& c : cases) {
    SECTION(c.name) {
      Run run = simulate_text(c.text);
      CHECK(run.exit == 2);
      CHECK(run.out.empty());
      CHECK_THAT(run.err, Catch::Contains(c.error));
    }
  }
}

TEST_CASE("simulate: malformed scenario files exit 2 with the field named and print nothing",
          "[autoscaler][simulate]") {
  const std::string good_pod = kPod;
  const std::vector<Malformed> cases = {
      {"not JSON", "{\"hpa\": ", "not valid JSON"},
      {"not an object", "[1, 2]", "scenario: not a JSON object"},
      {"no hpa", R"({"steps": []})", "hpa: is required"},
      {"no steps", std::string("{") + kHpa + "}", "steps: is required"},
      {"hpa field with a wrong type",
       R"({"hpa": {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": "ten"}}, "steps": []})",
       "hpa.spec.maxReplicas: not an integer"},
      {"first step without replicas", scenario(R"([{"at": 0}])"), "steps[0].replicas: is required on the first step"},
      {"step without at", scenario(R"([{"at": 0, "replicas": 1}, {"replicas": 2}])"), "steps[1].at: is required"},
      {"bad time", scenario(R"([{"at": 0, "replicas": 1, "pods": [{"name": "p", "startTime": "yesterday"}]}])"),
       "steps[0].pods[0].startTime: not a time"},
      {"time of the wrong type", scenario(R"([{"at": 0, "replicas": 1, "pods": [{"name": "p", "startTime": true}]}])"),
       "steps[0].pods[0].startTime: not a time"},
      {"bad start", scenario("[]", R"(, "start": "soon")"), "start: not a time"},
      {"unparsable quantity",
       scenario(R"([{"at": 0, "replicas": 1, "pods": [{"name": "p", "usage": {"app": {"cpu": "12xyz"}}}]}])"),
       "steps[0].pods[0].usage.app.cpu: "},
      {"unparsable request",
       scenario(
           R"([{"at": 0, "replicas": 1, "pods": [{"name": "p", "containers": [{"name": "app", "requests": {"cpu": "lots"}}]}]}])"),
       "steps[0].pods[0].containers[0].requests.cpu: "},
      {"unparsable pod-level request",
       scenario(R"([{"at": 0, "replicas": 1, "pods": [{"name": "p", "resources": {"requests": {"cpu": "lots"}}}]}])"),
       "steps[0].pods[0].resources.requests.cpu: "},
      {"pod-level limits",
       scenario(R"([{"at": 0, "replicas": 1, "pods": [{"name": "p", "resources": {"limits": {}}}]}])"),
       "steps[0].pods[0].resources.limits: unknown field"},
      {"hpa status condition without type",
       R"({"hpa": {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3},
           "status": {"conditions": [{"status": "True"}]}}, "steps": [{"at": 0, "replicas": 0}]})",
       "hpa.status.conditions[0].type: is required"},
      {"hpa status condition with a bad status",
       R"({"hpa": {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3},
           "status": {"conditions": [{"type": "ScaledToZero", "status": "Yes"}]}}, "steps": [{"at": 0, "replicas": 0}]})",
       "hpa.status.conditions[0].status: must be True, False or Unknown"},
      {"bad phase", scenario(R"([{"at": 0, "replicas": 1, "pods": [{"name": "p", "phase": "Sleeping"}]}])"),
       "steps[0].pods[0].phase: must be Pending, Running, Succeeded, Failed or Unknown"},
      {"bad ready", scenario(R"([{"at": 0, "replicas": 1, "pods": [{"name": "p", "ready": "Maybe"}]}])"),
       "steps[0].pods[0].ready: must be True, False or Unknown"},
      {"pod without name", scenario(R"([{"at": 0, "replicas": 1, "pods": [{"cluster": "member1"}]}])"),
       "steps[0].pods[0].name: is required"},
      {"duplicate pod", scenario("[{\"at\": 0, \"replicas\": 1, \"pods\": [" + good_pod + ", " + good_pod + "]}]"),
       "steps[0].pods[1]: duplicate pod default/default/web-1"},
      {"flat usage with two containers",
       scenario(
           R"([{"at": 0, "replicas": 1, "pods": [{"name": "p", "containers": [{"name": "a"}, {"name": "b"}], "usage": {"cpu": "1"}}]}])"),
       "steps[0].pods[0].usage: a flat resource map needs a pod with one container"},
      {"bad external selector",
       scenario(
           R"([{"at": 0, "replicas": 1, "externalMetrics": [{"metric": {"name": "q", "selector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}, "values": ["1"]}]}])"),
       "steps[0].externalMetrics[0].metric.selector"},
      {"external values not an array",
       scenario(R"([{"at": 0, "replicas": 1, "externalMetrics": [{"metric": {"name": "q"}, "values": "1"}]}])"),
       "steps[0].externalMetrics[0].values: not an array"},
      {"object metric without value",
       scenario(
           R"([{"at": 0, "replicas": 1, "objectMetrics": [{"describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "m"}}]}])"),
       "steps[0].objectMetrics[0].value: is required"},
      {"config of the wrong type", scenario("[]", R"(, "config": {"cpuInitializationPeriodSeconds": "5m"})"),
       "config.cpuInitializationPeriodSeconds: not a number of seconds"},
      {"pods not an array", scenario(R"([{"at": 0, "replicas": 1, "pods": {}}])"), "steps[0].pods: not an array"},
      {"memberReplicas not an object", scenario(R"([{"at": 0, "replicas": 1, "memberReplicas": [2, 2]}])"),
       "steps[0].memberReplicas: not an object"},
      {"memberReplicas value not an integer",
       scenario(R"([{"at": 0, "replicas": 1, "memberReplicas": {"m1": "two"}}])"),
       "steps[0].memberReplicas.m1: not an integer"},
      {"memberReplicas negative", scenario(R"([{"at": 0, "replicas": 1, "memberReplicas": {"m1": -1}}])"),
       "steps[0].memberReplicas.m1: must not be negative"},
      {"unreadMembers entry not an object", scenario(R"([{"at": 0, "replicas": 1, "unreadMembers": {"m2": 2}}])"),
       "steps[0].unreadMembers.m2: not an object"},
      {"unreadMembers without replicas", scenario(R"([{"at": 0, "replicas": 1, "unreadMembers": {"m2": {}}}])"),
       "steps[0].unreadMembers.m2.replicas: is required"},
      {"unreadMembers replicas not an integer",
       scenario(R"([{"at": 0, "replicas": 1, "unreadMembers": {"m2": {"replicas": 1.5}}}])"),
       "steps[0].unreadMembers.m2.replicas: not an integer"},
      {"missingMembers not an array",
       scenario(
           R"([{"at": 0, "replicas": 1, "externalMetrics": [{"metric": {"name": "q"}, "values": ["1"], "missingMembers": "m2"}]}])"),
       "steps[0].externalMetrics[0].missingMembers: not an array"},
      {"missingMembers entry not a string",
       scenario(
           R"([{"at": 0, "replicas": 1, "objectMetrics": [{"describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "m"}, "value": "1", "missingMembers": [2]}]}])"),
       "steps[0].objectMetrics[0].missingMembers[0]: not a member name"},
  };
  check_rejected(cases);
}

// A scenario whose FederatedHPA spec is `spec` (a JSON object's members) and whose steps are `steps`.
std::string with_spec(const std::string& spec, const std::string& steps = R"([{"at": 0, "replicas": 1}])") {
  return R"({"hpa": {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 10, )" + spec +
         R"(}}, "steps": )" + steps + "}";
}

// What a person gets wrong when writing a scenario by hand: a misspelled
// field would be dropped and change the result; a step earlier than the one
// before it would make the windows look back from the wrong time.
TEST_CASE("simulate: a field the format does not have, time going back or no step is refused",
          "[autoscaler][simulate]") {
  const std::string cron_target = R"("scaleTargetRef": {"kind": "FederatedHPA", "name": "web"})";
  const std::vector<Malformed> cases = {
      {"a misspelled step field",
       scenario(R"([{"at": 0, "replicas": 2, "unreadMember": {"member2": {"replicas": 2}}}])"),
       "steps[0].unreadMember: unknown field (did you mean \"unreadMembers\"?)"},
      {"a misspelled spec field", with_spec(R"("minReplica": 3)"),
       "hpa.spec.minReplica: unknown field (did you mean \"minReplicas\"?)"},
      {"a field of the spec at the top",
       std::string("{") + kHpa + R"(, "maxReplicas": 3, "steps": [{"at": 0, "replicas": 1}]})",
       "maxReplicas: unknown field"},
      {"a misspelled pod field",
       scenario(R"([{"at": 0, "replicas": 1, "pods": [{"name": "p", "usages": {"cpu": "1"}}]}])"),
       "steps[0].pods[0].usages: unknown field (did you mean \"usage\"?)"},
      {"a misspelled container field",
       scenario(R"([{"at": 0, "replicas": 1, "pods": [{"name": "p", "containers": [{"name": "a", "request": {}}]}]}])"),
       "steps[0].pods[0].containers[0].request: unknown field (did you mean \"requests\"?)"},
      {"a misspelled config field", scenario(R"([{"at": 0, "replicas": 1}])", R"(, "config": {"tolerence": 0.5})"),
       "config.tolerence: unknown field (did you mean \"tolerance\"?)"},
      {"a misspelled unreadMembers entry",
       scenario(R"([{"at": 0, "replicas": 1, "unreadMembers": {"m2": {"replica": 1}}}])"),
       "steps[0].unreadMembers.m2.replica: unknown field"},
      {"values misspelled in an External metric",
       scenario(R"([{"at": 0, "replicas": 1, "externalMetrics": [{"metric": {"name": "q"}, "value": "1"}]}])"),
       "steps[0].externalMetrics[0].value: unknown field (did you mean \"values\"?)"},
      {"a misspelled selector",
       scenario(
           R"([{"at": 0, "replicas": 1, "externalMetrics": [{"metric": {"name": "q", "selector": {"matchLabel": {"a": "b"}}}, "values": ["1"]}]}])"),
       "steps[0].externalMetrics[0].metric.selector.matchLabel: unknown field (did you mean \"matchLabels\"?)"},
      {"a misspelled describedObject",
       scenario(
           R"([{"at": 0, "replicas": 1, "objectMetrics": [{"describedObjects": {"kind": "Service", "name": "s"}, "metric": {"name": "m"}, "value": "1"}]}])"),
       "steps[0].objectMetrics[0].describedObjects: unknown field"},
      {"a misspelled target field",
       with_spec(
           R"("metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50, "averageUtilisation": 20}}}])"),
       "hpa.spec.metrics[0].resource.target.averageUtilisation: unknown field (did you mean \"averageUtilization\"?)"},
      {"a source of another type",
       with_spec(
           R"("metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}, "pods": {}}])"),
       "hpa.spec.metrics[0].pods: must not be set for a metric of type Resource"},
      {"a misspelled behavior", with_spec(R"("behavior": {"scaleup": {}})"),
       "hpa.spec.behavior.scaleup: unknown field (did you mean \"scaleUp\"?)"},
      {"a misspelled policy field",
       with_spec(R"("behavior": {"scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSecond": 60}]}})"),
       "hpa.spec.behavior.scaleDown.policies[0].periodSecond: unknown field (did you mean \"periodSeconds\"?)"},
      {"a namespace in scaleTargetRef",
       R"({"hpa": {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "namespace": "x"}, "maxReplicas": 3}}, "steps": [{"at": 0, "replicas": 1}]})",
       "hpa.spec.scaleTargetRef.namespace: unknown field"},
      {"a misspelled metadata field",
       R"({"hpa": {"metadata": {"nmae": "web"}, "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3}}, "steps": [{"at": 0, "replicas": 1}]})",
       "hpa.metadata.nmae: unknown field (did you mean \"name\"?)"},
      {"a whole object without spec",
       R"({"hpa": {"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA", "spce": {}}, "steps": [{"at": 0, "replicas": 1}]})",
       "hpa.spce: unknown field (did you mean \"spec\"?)"},
      {"a misspelled cron rule field",
       scenario(
           R"([{"at": 0, "replicas": 1}])",
           R"(, "cron": {)" + cron_target +
               R"(, "rules": [{"name": "a", "schedule": "0 8 * * *", "timezone": "UTC", "targetMinReplicas": 2}]})"),
       "cron.rules[0].timezone: unknown field (did you mean \"timeZone\"?)"},
      {"a misspelled cron field",
       scenario(R"([{"at": 0, "replicas": 1}])", R"(, "cron": {)" + cron_target + R"(, "rule": []})"),
       "cron.rule: unknown field (did you mean \"rules\"?)"},
      {"a negative at", scenario(R"([{"at": -5, "replicas": 1}])"),
       "steps[0].at: -5 is before start (2024-01-01T00:00:00Z)"},
      {"an at before start as a time", scenario(R"([{"at": "2023-12-31T23:00:00Z", "replicas": 1}])"),
       "steps[0].at: \"2023-12-31T23:00:00Z\" is before start"},
      {"time going back", scenario(R"([{"at": 0, "replicas": 1}, {"at": 30}, {"at": 10}])"),
       "steps[2].at: 10 is not later than the step before it (30); steps are syncs in time order"},
      {"two steps at one time", scenario(R"([{"at": 0, "replicas": 1}, {"at": "2024-01-01T00:00:00Z"}])"),
       "steps[1].at: \"2024-01-01T00:00:00Z\" is not later than the step before it (0)"},
      {"no step", scenario("[]"), "steps: must have at least one step"},
  };
  check_rejected(cases);

  SECTION("what a whole object from the API server carries is accepted, and times as numbers or RFC 3339") {
    Run run = simulate_text(
        R"({"description": "why", "hpa": {"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA",
        "metadata": {"name": "web", "uid": "u", "labels": {"a": "b"}, "resourceVersion": "7"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3},
        "status": {"currentReplicas": 1}},
      "steps": [{"at": 0, "replicas": 1}, {"at": 0.5}, {"at": "2024-01-01T00:00:15Z"}]})");
    CHECK(run.err.empty());
    CHECK(run.exit == 0);
    CHECK(run.lines.size() == 3);
  }
}

// --- "mode": "distributed" (docs/simulate.md) ----------------------------------

// "member1 1/6 update, member3 delete" in name order.
std::string members_of(const json& line) {
  std::string out;
  for (const auto& [name, m] : line.at("members").items()) {
    if (!out.empty()) out += ", ";
    out += name + " ";
    if (m.contains("maxReplicas")) {
      out +=
          std::to_string(m.at("minReplicas").get<int>()) + "/" + std::to_string(m.at("maxReplicas").get<int>()) + " ";
    }
    out += m.at("action").get<std::string>();
  }
  return out;
}

std::string moves_of(const json& line) {
  std::string out;
  for (const auto& m : line.at("moves")) {
    out += (out.empty() ? "" : ", ") + m.at("from").get<std::string>() + "->" + m.at("to").get<std::string>() + " " +
           std::to_string(m.at("maxReplicas").get<int>());
  }
  return out;
}

TEST_CASE("simulate: a CronFederatedHPA's business hours over a day (the example)", "[autoscaler][simulate][cron]") {
  Run run = simulate_file(examples_dir() / "cron-business-hours.json");
  REQUIRE(run.exit == 0);
  REQUIRE(run.lines.size() == 24);
  std::vector<int> expected(24, 2);
  for (int h = 8; h <= 18; ++h) expected[h] = 20;
  expected[19] = 4;
  CHECK(desired(run) == expected);
  for (int h = 0; h < 24; ++h) {
    INFO(h);
    if (h == 8) {
      CHECK(run.lines[h]["cron"] == json::parse(R"([{"rule": "weekday-morning", "scheduleTime": "2026-11-23T07:30:00Z",
          "applied": {"minReplicas": 20, "maxReplicas": 60}}])"));
    } else if (h == 19) {
      CHECK(run.lines[h]["cron"] == json::parse(R"([{"rule": "evening", "scheduleTime": "2026-11-23T19:00:00Z",
          "applied": {"minReplicas": 2, "maxReplicas": 60}}])"));
    } else {
      CHECK(run.lines[h]["cron"] == json::array());  // the suspended rule never fires
    }
  }
}

TEST_CASE("simulate: CronFederatedHPA firings between steps", "[autoscaler][simulate][cron]") {
  const std::string pods = std::string("\"pods\": [") + kPod + "]";
  SECTION(
      "a firing at a step's time belongs to that step, the start's to the first; @every counts from start; ties in "
      "rule order") {
    Run run = simulate_text(scenario(
        "[{\"at\": 0, \"replicas\": 1, " + pods + "}, {\"at\": 60, " + pods + "}, {\"at\": 150, " + pods + "}]",
        R"(, "cron": {"spec": {"scaleTargetRef": {"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA", "name": "any"},
            "rules": [{"name": "every", "schedule": "@every 60s", "targetMaxReplicas": 8},
                      {"name": "minute", "schedule": "* * * * *", "targetMinReplicas": 3}]}})"));
    REQUIRE(run.exit == 0);
    REQUIRE(run.lines.size() == 3);
    // [start, 0]: the minute rule fires at the start; @every first at start + 60 s.
    CHECK(run.lines[0]["cron"] == json::parse(R"([
        {"rule": "minute", "scheduleTime": "2024-01-01T00:00:00Z", "applied": {"minReplicas": 3, "maxReplicas": 10}}])"));
    CHECK(run.lines[1]["cron"] == json::parse(R"([
        {"rule": "every", "scheduleTime": "2024-01-01T00:01:00Z", "applied": {"minReplicas": 3, "maxReplicas": 8}},
        {"rule": "minute", "scheduleTime": "2024-01-01T00:01:00Z", "applied": {"minReplicas": 3, "maxReplicas": 8}}])"));
    CHECK(run.lines[1]["desiredReplicas"] == 3);  // the new minimum, at once
    CHECK(run.lines[2]["cron"].size() == 2);      // (60, 150]: 00:02 for both
  }
  SECTION("a rule whose min would exceed max fails and changes nothing") {
    Run run = simulate_text(scenario("[{\"at\": 0, \"replicas\": 1, " + pods + "}, {\"at\": 60, " + pods + "}]",
                                     R"(, "cron": {"spec": {"scaleTargetRef": {"kind": "FederatedHPA", "name": "web"},
            "rules": [{"name": "high", "schedule": "* * * * *", "targetMinReplicas": 50}]}})"));
    REQUIRE(run.exit == 0);
    CHECK(run.lines[1]["cron"][0]["failed"] ==
          "minReplicas 50 (the rule's) would exceed maxReplicas 10 (the FederatedHPA's); nothing written");
  }
  SECTION("a workload target writes the scale the next step starts from") {
    Run run = simulate_text(scenario(
        "[{\"at\": 0, \"replicas\": 1, " + pods + "}, {\"at\": 60, " + pods + "}]",
        R"(, "cron": {"spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "rules": [{"name": "batch", "schedule": "* * * * *", "targetReplicas": 6}]}})"));
    REQUIRE(run.exit == 0);
    CHECK(run.lines[1]["cron"] ==
          json::parse(R"([{"rule": "batch", "scheduleTime": "2024-01-01T00:01:00Z", "applied": {"replicas": 6}}])"));
    CHECK(run.lines[1]["currentReplicas"] == 6);
  }
}

TEST_CASE("simulate: malformed CronFederatedHPAs exit 2 with the field named", "[autoscaler][simulate][cron]") {
  const std::string steps = R"([{"at": 0, "replicas": 1}])";
  check_rejected({
      {"another target",
       scenario(steps, R"(, "cron": {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "api"}, "rules": []}})"),
       "cron.spec.scaleTargetRef: must be the scenario's FederatedHPA or its workload (Deployment \"web\"), not "
       "Deployment \"api\""},
      {"bad schedule", scenario(steps, R"(, "cron": {"scaleTargetRef": {"kind": "FederatedHPA", "name": "web"},
          "rules": [{"name": "a", "schedule": "0 0 13 *", "targetMinReplicas": 1}]})"),
       "cron.rules[0].schedule: invalid schedule \"0 0 13 *\": expected 5 fields, found 4"},
      {"bad zone", scenario(steps, R"(, "cron": {"scaleTargetRef": {"kind": "FederatedHPA", "name": "web"},
          "rules": [{"name": "a", "schedule": "0 8 * * *", "timeZone": "Mars/Olympus", "targetMinReplicas": 1}]})"),
       "cron.rules[0].timeZone: unknown time zone \"Mars/Olympus\""},
      {"bad zone in the schedule's prefix",
       scenario(steps, R"(, "cron": {"scaleTargetRef": {"kind": "FederatedHPA", "name": "web"},
          "rules": [{"name": "a", "schedule": "CRON_TZ=Mars/Olympus 0 8 * * *", "targetMinReplicas": 1}]})"),
       "cron.rules[0].schedule: invalid schedule \"CRON_TZ=Mars/Olympus 0 8 * * *\": unknown time zone "
       "\"Mars/Olympus\""},
      {"rule without a value", scenario(steps, R"(, "cron": {"scaleTargetRef": {"kind": "FederatedHPA", "name": "web"},
          "rules": [{"name": "a", "schedule": "0 8 * * *"}]})"),
       "cron.rules[0]: a FederatedHPA target needs targetMinReplicas and/or targetMaxReplicas"},
      {"no target", scenario(steps, R"(, "cron": {"rules": []})"), "cron.scaleTargetRef: is required"},
      {"in a distributed scenario", R"({"mode": "distributed", "cron": {}, "hpa": {}, "steps": []})",
       "cron: a CronFederatedHPA is replayed in a centralized scenario only"},
  });
}

TEST_CASE("simulate: distributed mode, the documented example extended", "[autoscaler][simulate][distributor]") {
  Run run = simulate_file(examples_dir() / "distributed-rebalance.json");
  REQUIRE(run.exit == 0);
  CHECK(run.err.empty());
  struct Expected {
    std::string members;
    std::string moves;
    int current;
  };
  const std::vector<Expected> expected = {
      {"member1 1/3 create, member2 1/3 create, member3 1/3 create", "", 0},
      // the documented step at 300
      {"member1 1/6 update, member2 1/1 update, member3 1/2 update", "member2->member1 2, member3->member1 1", 5},
      // member4 joins: floor(9 / 4) = 2 from member1's spare (member1 scaled 200 s ago, outside the window)
      {"member1 1/4 update, member2 1/1 none, member3 1/2 none, member4 1/2 create", "member1->member4 2", 6},
      // maxReplicas 9 -> 13: the 4 to member2, the only receiver
      {"member1 1/4 none, member2 1/5 update, member3 1/2 none, member4 1/2 none", "", 8},
      // member3 leaves: its 2 to member4, pegged
      {"member1 1/4 none, member2 1/5 none, member3 delete, member4 1/4 update", "", 11},
      // maxReplicas 2 < 3 members
      {"", "", 11},
      // maxReplicas 13 -> 9: from the spare, largest first, ties by name
      {"member1 1/2 update, member2 1/5 none, member4 1/2 update", "", 9},
  };
  REQUIRE(run.lines.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("step " << i);
    CHECK(members_of(run.lines[i]) == expected[i].members);
    CHECK(moves_of(run.lines[i]) == expected[i].moves);
    CHECK(run.lines[i].at("currentReplicas") == expected[i].current);
    CHECK(run.lines[i].at("desiredReplicas") == expected[i].current);
  }
  CHECK(run.lines[1].at("events")[0].at("message") ==
        "moved 3 of maxReplicas from member2 (gave 2, now 1), member3 (gave 1, now 2) to member1 (now 6)");
  CHECK(reason(run.lines[5], "ScalingActive") == "InvalidDistribution");
  CHECK(reason(run.lines[6], "ScalingActive") == "ValidDistribution");
  // The exact line at 300, in the output's key order.
  CHECK(
      run.out.find(
          R"({"at":300,"members":{"member1":{"minReplicas":1,"maxReplicas":6,"action":"update"},)"
          R"("member2":{"minReplicas":1,"maxReplicas":1,"action":"update"},)"
          R"("member3":{"minReplicas":1,"maxReplicas":2,"action":"update"}},)"
          R"("moves":[{"from":"member2","to":"member1","maxReplicas":2},{"from":"member3","to":"member1","maxReplicas":1}],)"
          R"("currentReplicas":5,"desiredReplicas":5,"conditions":[)") != std::string::npos);
}

const char* kDistributedHpa =
    R"("mode": "distributed", "hpa": {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
  "minReplicas": 2, "maxReplicas": 9}})";

std::string distributed(const std::string& steps, const std::string& extra = "") {
  return std::string("{") + kDistributedHpa + extra + R"(, "steps": )" + steps + "}";
}

TEST_CASE("simulate: distributed mode, the step rules", "[autoscaler][simulate][distributor]") {
  SECTION("weights, a step's min/max override, replicas carried over") {
    Run run = simulate_text(distributed(R"([
      {"at": 0, "members": {"a": {"weight": 4}, "b": {"weight": 1}}},
      {"at": 15, "members": {"a": {"currentReplicas": 2}, "b": {"currentReplicas": 1}}},
      {"at": 30, "members": {"a": {"minReplicas": 1, "maxReplicas": 7}, "b": {"maxReplicas": 2}}}])",
                                        R"(, "config": {"rebalanceWindowSeconds": 60})"));
    REQUIRE(run.exit == 0);
    CHECK(members_of(run.lines[0]) == "a 1/7 create, b 1/2 create");  // 4:1 of 9
    CHECK(members_of(run.lines[1]) == "a 1/7 none, b 1/2 none");
    CHECK(run.lines[1].at("currentReplicas") == 3);
    // 7 + 2 = 9 already: the override is the member's state, nothing to change
    CHECK(members_of(run.lines[2]) == "a 1/7 none, b 1/2 none");
    CHECK(run.lines[2].at("currentReplicas") == 3);  // carried over
  }
  SECTION("lastScaleTime within the rebalance window keeps a donor's room; scalingLimited is per step") {
    const std::string steps = R"([
      {"at": 0, "members": {"a": {}, "b": {}}},
      {"at": 100, "members": {"a": {"currentReplicas": 5, "scalingLimited": "TooManyReplicas"},
                              "b": {"currentReplicas": 1, "lastScaleTime": 50}}},
      {"at": 200, "members": {"a": {"scalingLimited": "TooManyReplicas"}, "b": {}}},
      {"at": 300, "members": {"a": {}, "b": {}}}])";
    Run run = simulate_text(distributed(steps, R"(, "config": {"rebalanceWindowSeconds": 60})"));
    REQUIRE(run.exit == 0);
    CHECK(members_of(run.lines[0]) == "a 1/5 create, b 1/4 create");
    CHECK(moves_of(run.lines[1]) == "");  // b scaled 50 s ago, within 60 s
    CHECK(reason(run.lines[1], "ScalingLimited") == "TooManyReplicas");
    CHECK(moves_of(run.lines[2]) == "b->a 3");  // lastScaleTime is absent again
    CHECK(members_of(run.lines[2]) == "a 1/8 update, b 1/1 update");
    CHECK(moves_of(run.lines[3]) == "");
  }
  SECTION("a member absent from a step has left; a new name joins") {
    Run run = simulate_text(distributed(R"([
      {"at": 0, "members": {"a": {}, "b": {}, "c": {}}},
      {"at": 15, "members": {"a": {}, "b": {}}},
      {"at": 30, "members": {"a": {}, "b": {}, "d": {}}}])"));
    REQUIRE(run.exit == 0);
    CHECK(members_of(run.lines[1]) == "a 1/5 update, b 1/4 update, c delete");
    // floor(9 / 3) = 3 from the largest spare: a runs nothing (0 replicas given)
    CHECK(members_of(run.lines[2]) == "a 1/2 update, b 1/4 none, d 1/3 create");
    CHECK(moves_of(run.lines[2]) == "a->d 3");
  }
  SECTION("maxReplicas below the members: the condition and no members") {
    Run run = simulate_text(distributed(R"([{"at": 0, "members": {"a": {}, "b": {}, "c": {}}},
      {"at": 15, "hpa": {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 2}},
       "members": {"a": {}, "b": {}, "c": {}}}])"));
    REQUIRE(run.exit == 0);
    CHECK(run.lines[1].at("members").empty());
    CHECK(reason(run.lines[1], "ScalingActive") == "InvalidDistribution");
  }
  SECTION("\"mode\": \"centralized\" is the default format's path") {
    Run run = simulate_text(scenario(std::string("[{\"at\": 0, \"replicas\": 1, \"pods\": [") + kPod + "]}]",
                                     R"(, "mode": "centralized")"));
    REQUIRE(run.exit == 0);
    CHECK(desired(run) == std::vector<int>{2});
  }
}

TEST_CASE("simulate: malformed distributed scenarios exit 2 with the field named",
          "[autoscaler][simulate][distributor]") {
  auto step = [](const std::string& members) {
    return distributed(R"([{"at": 0, "members": {}}, {"at": 15, "members": )" + members + "}]");
  };
  const std::vector<Malformed> cases = {
      {"unknown mode", R"({"mode": "federated", "steps": []})",
       R"(mode: must be "centralized" or "distributed" (got "federated"))"},
      {"mode not a string", R"({"mode": 2, "steps": []})", "mode: must be \"centralized\" or \"distributed\" (got 2)"},
      {"no hpa", R"({"mode": "distributed", "steps": []})", "hpa: is required"},
      {"no steps", std::string("{") + kDistributedHpa + "}", "steps: is required"},
      {"no members", distributed(R"([{"at": 0}])"), "steps[0].members: is required"},
      {"members not an object", distributed(R"([{"at": 0, "members": ["a"]}])"), "steps[0].members: not an object"},
      {"no at", distributed(R"([{"members": {}}])"), "steps[0].at: is required"},
      {"member not an object", step(R"({"member1": 3})"), "steps[1].members.member1: not an object"},
      {"empty member name", step(R"({"": {}})"), "steps[1].members: a member name must not be empty"},
      {"negative currentReplicas", step(R"({"member1": {"currentReplicas": -1}})"),
       "steps[1].members.member1.currentReplicas: must be a non-negative integer"},
      {"fractional desiredReplicas", step(R"({"member1": {"desiredReplicas": 1.5}})"),
       "steps[1].members.member1.desiredReplicas: must be a non-negative integer"},
      {"weight a string", step(R"({"member1": {"weight": "2"}})"),
       "steps[1].members.member1.weight: must be a non-negative integer"},
      {"maxReplicas 0", step(R"({"member1": {"maxReplicas": 0}})"),
       "steps[1].members.member1.maxReplicas: must be a positive integer"},
      {"minReplicas too large", step(R"({"member1": {"minReplicas": 3000000000}})"),
       "steps[1].members.member1.minReplicas: must be a positive integer"},
      {"bad lastScaleTime", step(R"({"member1": {"lastScaleTime": "yesterday"}})"),
       "steps[1].members.member1.lastScaleTime: not a time"},
      {"bad scalingLimited", step(R"({"member1": {"scalingLimited": "Pegged"}})"),
       "steps[1].members.member1.scalingLimited: must be TooManyReplicas, TooFewReplicas, ScaleUpLimit or "
       "ScaleDownLimit"},
      {"scalingLimited not a string", step(R"({"member1": {"scalingLimited": true}})"),
       "steps[1].members.member1.scalingLimited: not a string"},
      {"bad step hpa",
       distributed(
           R"([{"at": 0, "members": {}, "hpa": {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": "ten"}}}])"),
       "steps[0].hpa.spec.maxReplicas: not an integer"},
      {"bad window", distributed("[]", R"(, "config": {"rebalanceWindowSeconds": -5})"),
       "config.rebalanceWindowSeconds: must not be negative"},
      {"window not a number", distributed("[]", R"(, "config": {"rebalanceWindowSeconds": "2m"})"),
       "config.rebalanceWindowSeconds: not a number of seconds"},
      {"a misspelled member field", step(R"({"member1": {"wieght": 2}})"),
       "steps[1].members.member1.wieght: unknown field (did you mean \"weight\"?)"},
      {"a misspelled step field", distributed(R"([{"at": 0, "member": {}}])"),
       "steps[0].member: unknown field (did you mean \"members\"?)"},
      {"a misspelled config field",
       distributed(R"([{"at": 0, "members": {}}])", R"(, "config": {"rebalanceWindow": 60})"),
       "config.rebalanceWindow: unknown field (did you mean \"rebalanceWindowSeconds\"?)"},
      {"a misspelled field in a step's hpa",
       distributed(
           R"([{"at": 0, "members": {}, "hpa": {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 4, "maxReplica": 5}}}])"),
       "steps[0].hpa.spec.maxReplica: unknown field (did you mean \"maxReplicas\"?)"},
      {"time going back", distributed(R"([{"at": 60, "members": {}}, {"at": 30, "members": {}}])"),
       "steps[1].at: 30 is not later than the step before it (60)"},
      {"a negative at", distributed(R"([{"at": -1, "members": {}}])"), "steps[0].at: -1 is before start"},
      {"no step", distributed("[]"), "steps: must have at least one step"},
  };
  check_rejected(cases);
}

}  // namespace
}  // namespace fedmetrics::autoscaler

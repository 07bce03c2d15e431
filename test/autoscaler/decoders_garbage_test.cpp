// The autoscaler's decoders of untrusted documents (FederatedHPAs,
// CronFederatedHPAs, scaling histories, scenario files) on documents broken
// at random: they answer a value or an error naming a field, never throw.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/behavior.hpp"
#include "fedmetrics/autoscaler/cron_federated_hpa.hpp"
#include "fedmetrics/autoscaler/distributed_scenario.hpp"
#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/autoscaler/scenario.hpp"
#include "support/random_json.hpp"

namespace fedmetrics::autoscaler {
namespace {

using nlohmann::json;

// A scenario of examples/scenarios (the build defines FEDMETRICS_SOURCE_DIR).
json example(const std::string& name) {
  std::ifstream file(std::filesystem::path(FEDMETRICS_SOURCE_DIR) / "examples" / "scenarios" / name);
  std::stringstream text;
  text << file.rdbuf();
  return json::parse(text.str(), nullptr, false);
}

// Every decoder of the module on `doc` and on its parts; returns how many refused it.
int decode_all(const json& doc) {
  int refused = 0;
  const bool distributed = doc.is_object() && doc.contains("mode") && doc["mode"] == "distributed";
  if (distributed) {
    refused += decode_distributed_scenario(doc).ok() ? 0 : 1;
  } else {
    refused += decode_scenario(doc).ok() ? 0 : 1;
  }
  const json& hpa = doc.is_object() && doc.contains("hpa") ? doc["hpa"] : doc;
  refused += decode_federated_hpa(hpa, "hpa", UnknownFields::Refuse).ok() ? 0 : 1;
  refused += decode_federated_hpa(hpa).ok() ? 0 : 1;
  refused += decode_federated_hpa_spec(hpa.is_object() && hpa.contains("spec") ? hpa["spec"] : hpa).ok() ? 0 : 1;
  const json& cron = doc.is_object() && doc.contains("cron") ? doc["cron"] : doc;
  refused += decode_cron_federated_hpa(cron, "cron", UnknownFields::Refuse).ok() ? 0 : 1;
  refused += scaling_history_from_json(doc).ok() ? 0 : 1;
  return refused;
}

}  // namespace

TEST_CASE("decoders: documents broken at random are refused with an error, never a throw", "[autoscaler][decode]") {
  const std::vector<std::string> keys = {"hpa",   "spec",  "metrics", "type",         "resource", "target",
                                         "steps", "at",    "pods",    "name",         "replicas", "usage",
                                         "cron",  "rules", "members", "averageValue", "behavior", "policies"};
  std::mt19937 rng(27);
  int refused = 0;
  for (const char* name : {"karmada-nginx-cpu.json", "karmada-sample-app-http-requests.json",
                           "scale-down-policies.json", "cron-business-hours.json", "distributed-rebalance.json",
                           "several-members-incomplete-data.json", "external-queue-scale-to-zero.json"}) {
    const json original = example(name);
    REQUIRE(original.is_object());
    for (int i = 0; i < 40; ++i) {
      json doc = original;
      for (std::size_t mutations = 1 + rng() % 3; mutations > 0; --mutations)
        doc = testing::mutate_json(std::move(doc), rng, keys);
      INFO(name << ": " << doc.dump());
      REQUIRE_NOTHROW(refused += decode_all(doc));
    }
  }
  for (int i = 0; i < 100; ++i) {
    const json doc = testing::random_json(rng, 5, keys);
    INFO(doc.dump());
    REQUIRE_NOTHROW(refused += decode_all(doc));
  }
  CHECK(refused > 0);
}

}  // namespace fedmetrics::autoscaler

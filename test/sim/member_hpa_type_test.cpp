#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "fedmetrics/sim/member_hpa_type.hpp"
#include "fedmetrics/sim/object_store.hpp"

using namespace fedmetrics;
using nlohmann::json;

namespace {

const k8s::Timestamp kNow = k8s::parse_time("2026-08-22T10:15:30Z").value();

json hpa(json spec) {
  return {{"apiVersion", "autoscaling/v2"},
          {"kind", "HorizontalPodAutoscaler"},
          {"metadata", {{"name", "web"}}},
          {"spec", std::move(spec)}};
}

const json kRef = {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "web"}};

}  // namespace

TEST_CASE("Member HPA: created with the scheme's defaults", "[sim][member-hpa]") {
  sim::ObjectStore store([] { return kNow; });
  store.register_type(sim::horizontal_pod_autoscaler_type());
  const auto* type = store.find_type("autoscaling", "v2", "horizontalpodautoscalers");
  REQUIRE(type != nullptr);
  auto created = store.create(*type, "shop", hpa({{"scaleTargetRef", kRef}, {"maxReplicas", 4}}));
  REQUIRE(std::holds_alternative<json>(created));
  const auto& spec = std::get<json>(created)["spec"];
  CHECK(spec["minReplicas"] == 1);
  CHECK(spec["metrics"][0]["resource"]["name"] == "cpu");
  CHECK(spec["metrics"][0]["resource"]["target"]["averageUtilization"] == 80);
  // A merge patch that breaks the bounds is refused and leaves the object.
  auto patched = store.patch(*type, "shop", "web", sim::PatchType::Merge, json{{"spec", {{"minReplicas", 5}}}});
  REQUIRE(std::holds_alternative<k8s::Status>(patched));
  const auto& status = std::get<k8s::Status>(patched);
  CHECK(status.code == 422);
  CHECK(status.reason == "Invalid");
  CHECK(status.message ==
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: spec.maxReplicas: Invalid value: 4: must be greater "
        "than or equal to `minReplicas`");
  CHECK(std::get<json>(store.get(*type, "shop", "web"))["spec"]["minReplicas"] == 1);
  // The status subresource is validated too, and keeps the spec.
  auto with_status = store.patch(*type, "shop", "web", sim::PatchType::Merge,
                                 json{{"status", {{"currentReplicas", 2}, {"desiredReplicas", 3}}}}, "status");
  REQUIRE(std::holds_alternative<json>(with_status));
  CHECK(std::get<json>(with_status)["status"]["desiredReplicas"] == 3);
}

TEST_CASE("Member HPA: validation names every invalid field as kube-apiserver", "[sim][member-hpa]") {
  CHECK(sim::validate_horizontal_pod_autoscaler(hpa({{"scaleTargetRef", kRef}, {"minReplicas", 1}, {"maxReplicas", 1}}))
            .empty());
  auto causes = sim::validate_horizontal_pod_autoscaler(hpa({{"minReplicas", 0}, {"maxReplicas", 0}}));
  REQUIRE(causes.size() == 4);
  CHECK(causes[0] == k8s::StatusCause{"FieldValueRequired", "Required value", "spec.scaleTargetRef.kind"});
  CHECK(causes[1] == k8s::StatusCause{"FieldValueRequired", "Required value", "spec.scaleTargetRef.name"});
  CHECK(causes[2] == k8s::StatusCause{"FieldValueInvalid", "Invalid value: 0: must be greater than or equal to 1",
                                      "spec.minReplicas"});
  CHECK(causes[3] ==
        k8s::StatusCause{"FieldValueInvalid", "Invalid value: 0: must be greater than 0", "spec.maxReplicas"});

  sim::ObjectStore store([] { return kNow; });
  store.register_type(sim::horizontal_pod_autoscaler_type());
  const auto* type = store.find_type("autoscaling", "v2", "horizontalpodautoscalers");
  auto refused = store.create(*type, "shop", hpa({{"scaleTargetRef", kRef}, {"minReplicas", 0}, {"maxReplicas", 0}}));
  REQUIRE(std::holds_alternative<k8s::Status>(refused));
  const auto& status = std::get<k8s::Status>(refused);
  CHECK(status.code == 422);
  CHECK(status.message ==
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: [spec.minReplicas: Invalid value: 0: "
        "must be greater than or equal to 1, spec.maxReplicas: Invalid value: 0: must be greater than 0]");
  CHECK(status.details.kind == "HorizontalPodAutoscaler");
  CHECK(status.details.group == "autoscaling");
  CHECK(status.details.causes.size() == 2);
  CHECK(std::holds_alternative<k8s::Status>(store.get(*type, "shop", "web")));  // nothing stored
}

TEST_CASE("Member HPA: kubectl's table shows reference, targets and bounds", "[sim][member-hpa]") {
  auto object = hpa({{"scaleTargetRef", kRef}, {"minReplicas", 1}, {"maxReplicas", 4}});
  sim::default_horizontal_pod_autoscaler(object);
  object["metadata"]["creationTimestamp"] = "2026-08-22T10:14:30Z";
  object["status"] = {
      {"currentReplicas", 2},
      {"currentMetrics",
       {{{"type", "Resource"}, {"resource", {{"name", "cpu"}, {"current", {{"averageUtilization", 45}}}}}}}}};
  auto table = sim::horizontal_pod_autoscaler_table(object, kNow);
  REQUIRE(table["rows"].size() == 1);
  CHECK(table["rows"][0]["cells"] == json::array({"web", "Deployment/web", "cpu: 45%/80%", "1", 4, 2, "60s"}));
}

// What the loop keys its memory by (the object, not its name) and which
// FederatedHPAs share a target (upstream's AmbiguousSelector).
#include <catch2/catch.hpp>

#include <set>

#include "controller/federated_hpa_key.hpp"

namespace fedmetrics::controller {
namespace {

using nlohmann::json;

json object(std::string name, std::string uid, json ref) {
  return {{"metadata", {{"namespace", "shop"}, {"name", std::move(name)}, {"uid", std::move(uid)}}},
          {"spec", {{"scaleTargetRef", std::move(ref)}}}};
}

TEST_CASE("federated_hpa_key: an object created again under its name is another object") {
  const json deployment = {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "web"}};
  const auto first = federated_hpa_key(object("web", "uid-1", deployment));
  const auto again = federated_hpa_key(object("web", "uid-2", deployment));
  REQUIRE(first);
  REQUIRE(again);
  CHECK(*first != *again);
  CHECK(first->same_name(*again));
  CHECK(first->str() == "shop/web");
  std::set<FederatedHPAKey> remembered{*first};
  CHECK_FALSE(remembered.count(*again));  // what the first one remembered is not the second one's
  CHECK(remembered.count(*federated_hpa_key(object("web", "uid-1", deployment))));
  SECTION("no name: no key") {
    CHECK_FALSE(federated_hpa_key(json::object()));
    CHECK_FALSE(federated_hpa_key(json::parse(R"({"metadata":{"name":7}})")));
    CHECK_FALSE(federated_hpa_key(json::array()));
  }
}

TEST_CASE("federated_hpa_key: the target is the workload: namespace, group, kind and name, not the version") {
  auto target = [](json ref) { return scale_target_key(object("a", "u", std::move(ref))); };
  const auto apps_v1 = target({{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "web"}});
  REQUIRE(apps_v1);
  CHECK(apps_v1->namespace_name == "shop");
  CHECK(apps_v1->group == "apps");
  CHECK(*apps_v1 == *target({{"apiVersion", "apps/v1beta2"}, {"kind", "Deployment"}, {"name", "web"}}));
  CHECK(*apps_v1 != *target({{"apiVersion", "apps/v1"}, {"kind", "StatefulSet"}, {"name", "web"}}));
  CHECK(*apps_v1 != *target({{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "api"}}));
  CHECK(*apps_v1 != *target({{"apiVersion", "example.com/v1"}, {"kind", "Deployment"}, {"name", "web"}}));
  CHECK(target({{"apiVersion", "v1"}, {"kind", "ReplicationController"}, {"name", "web"}})->group.empty());
  CHECK_FALSE(target({{"apiVersion", "apps/v1"}, {"kind", "Deployment"}}));
  CHECK_FALSE(scale_target_key(json::parse(R"({"spec":{"scaleTargetRef":"web"}})")));
}

TEST_CASE("federated_hpa_key: the FederatedHPAs of one target, and upstream's message") {
  const ScaleTargetKey web{"shop", "apps", "Deployment", "web"};
  const ScaleTargetKey api{"shop", "apps", "Deployment", "api"};
  const std::vector<std::pair<FederatedHPAKey, ScaleTargetKey>> known = {
      {{"shop", "web-cpu", "u2"}, web},
      {{"shop", "api", "u3"}, api},
      {{"shop", "web", "u1"}, web},
  };
  const auto controllers = controllers_of(web, known);
  CHECK(controllers == std::vector<std::string>{"shop/web", "shop/web-cpu"});
  CHECK(controllers_of(api, known) == std::vector<std::string>{"shop/api"});
  CHECK(ambiguous_selector_message("app=web", controllers) ==
        "pods by selector app=web are controlled by multiple HPAs: [shop/web shop/web-cpu]");
  CHECK(ambiguous_target_message("Deployment", "web", controllers) ==
        "pods of Deployment/web are controlled by multiple HPAs: [shop/web shop/web-cpu]");
}

}  // namespace
}  // namespace fedmetrics::controller

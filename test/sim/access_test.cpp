#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "sim/access.hpp"

using namespace fedmetrics;
using namespace std::chrono_literals;
using nlohmann::json;
using sim::ObjectStore;
using sim::ResourceType;

namespace {

const k8s::Timestamp kNow = k8s::parse_time("2026-08-22T10:15:30Z").value();

ResourceType type(const char* group, const char* resource, const char* kind, bool namespaced) {
  ResourceType t;
  t.group = group;
  t.version = "v1";
  t.resource = resource;
  t.kind = kind;
  t.namespaced = namespaced;
  return t;
}

std::shared_ptr<ObjectStore> rbac_store() {
  auto store = std::make_shared<ObjectStore>([] { return kNow; });
  store->register_type(type("", "serviceaccounts", "ServiceAccount", true));
  store->register_type(type("", "secrets", "Secret", true));
  for (auto [resource, kind, namespaced] :
       {std::tuple{"clusterroles", "ClusterRole", false},
        std::tuple{"clusterrolebindings", "ClusterRoleBinding", false}, std::tuple{"roles", "Role", true},
        std::tuple{"rolebindings", "RoleBinding", true}})
    store->register_type(type("rbac.authorization.k8s.io", resource, kind, namespaced));
  store->create(*store->find_type("", "v1", "serviceaccounts"), "fedmetrics-system",
                {{"metadata", {{"name", "fedmetrics"}}}});
  return store;
}

json body(std::int64_t seconds) { return {{"spec", {{"expirationSeconds", seconds}}}}; }

std::string issue(ObjectStore& store, sim::detail::ServiceAccountTokens& tokens, std::int64_t seconds) {
  auto r = sim::detail::token_request(store, tokens, "fedmetrics-system", "fedmetrics", body(seconds).dump(), kNow);
  REQUIRE(r.status == 201);
  return json::parse(r.body)["status"]["token"].get<std::string>();
}

json resource_spec(const char* verb, const char* group, const char* resource, const char* ns = "") {
  return {{"resourceAttributes", {{"verb", verb}, {"group", group}, {"resource", resource}, {"namespace", ns}}}};
}

}  // namespace

TEST_CASE("TokenRequest: a ServiceAccount token authenticates until expirationSeconds, while the account exists",
          "[sim][access]") {
  auto store = rbac_store();
  sim::detail::ServiceAccountTokens tokens;
  sim::World world;
  auto r = sim::detail::token_request(*store, tokens, "fedmetrics-system", "fedmetrics", body(600).dump(), kNow);
  REQUIRE(r.status == 201);
  auto answer = json::parse(r.body);
  CHECK(answer["kind"] == "TokenRequest");
  CHECK(answer["status"]["expirationTimestamp"] == k8s::format_time(kNow + 600s));
  CHECK(answer["spec"]["expirationSeconds"] == 600);
  const auto token = answer["status"]["token"].get<std::string>();

  auto user = sim::detail::authenticate_token(world, *store, tokens, token, kNow + 599s);
  REQUIRE(user);
  CHECK(user->name == "system:serviceaccount:fedmetrics-system:fedmetrics");
  CHECK(user->groups == std::vector<std::string>{"system:serviceaccounts", "system:serviceaccounts:fedmetrics-system",
                                                 "system:authenticated"});
  CHECK_FALSE(user->uid.empty());
  CHECK_FALSE(sim::detail::authenticate_token(world, *store, tokens, token, kNow + 600s));  // expired
  CHECK_FALSE(sim::detail::authenticate_token(world, *store, tokens, token + "x", kNow));

  // Without expirationSeconds: an hour, as kube-apiserver defaults it.
  auto hour =
      json::parse(sim::detail::token_request(*store, tokens, "fedmetrics-system", "fedmetrics", "{}", kNow).body);
  CHECK(hour["status"]["expirationTimestamp"] == k8s::format_time(kNow + 3600s));
  auto null_seconds = json::parse(sim::detail::token_request(*store, tokens, "fedmetrics-system", "fedmetrics",
                                                             R"({"spec":{"expirationSeconds":null}})", kNow)
                                      .body);
  CHECK(null_seconds["status"]["expirationTimestamp"] == k8s::format_time(kNow + 3600s));  // kubectl without --duration

  // A ServiceAccount deleted (and made again: another uid) takes its tokens with it.
  const auto& accounts = *store->find_type("", "v1", "serviceaccounts");
  store->remove(accounts, "fedmetrics-system", "fedmetrics");
  CHECK_FALSE(sim::detail::authenticate_token(world, *store, tokens, token, kNow));
  store->create(accounts, "fedmetrics-system", {{"metadata", {{"name", "fedmetrics"}}}});
  CHECK_FALSE(sim::detail::authenticate_token(world, *store, tokens, token, kNow));
}

TEST_CASE("TokenRequest: refused durations, a missing account, a bound Secret", "[sim][access]") {
  auto store = rbac_store();
  sim::detail::ServiceAccountTokens tokens;
  struct Row {
    json request;
    int code;
    const char* message;
  };
  for (const auto& row : std::vector<Row>{
           {body(599), 422,
            "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"},
           {body((std::int64_t{1} << 32) + 1), 422, "may not specify a duration larger than 2^32 seconds"},
           {{{"spec", {{"expirationSeconds", "600"}}}}, 400, "spec.expirationSeconds must be an integer"},
           {{{"spec", {{"boundObjectRef", {{"kind", "Node"}, {"name", "n"}}}}}}, 422, "supported values"},
           {{{"spec", {{"boundObjectRef", {{"kind", "Secret"}, {"name", "nope"}}}}}},
            404,
            "secrets \"nope\" not found"},
       }) {
    auto r = sim::detail::token_request(*store, tokens, "fedmetrics-system", "fedmetrics", row.request.dump(), kNow);
    INFO(row.request.dump() << " -> " << r.body);
    CHECK(r.status == row.code);
    CHECK_THAT(json::parse(r.body)["message"].get<std::string>(), Catch::Contains(row.message));
  }
  CHECK(sim::detail::token_request(*store, tokens, "default", "fedmetrics", "{}", kNow).status == 404);
  CHECK(sim::detail::token_request(*store, tokens, "fedmetrics-system", "fedmetrics", "[", kNow).status == 400);

  // Bound to a Secret: valid while that Secret lives.
  const auto& secrets = *store->find_type("", "v1", "secrets");
  store->create(secrets, "fedmetrics-system", {{"metadata", {{"name", "holder"}}}});
  json bound = {{"spec", {{"boundObjectRef", {{"kind", "Secret"}, {"apiVersion", "v1"}, {"name", "holder"}}}}}};
  auto r = sim::detail::token_request(*store, tokens, "fedmetrics-system", "fedmetrics", bound.dump(), kNow);
  REQUIRE(r.status == 201);
  auto token = json::parse(r.body)["status"]["token"].get<std::string>();
  sim::World world;
  CHECK(sim::detail::authenticate_token(world, *store, tokens, token, kNow));
  store->remove(secrets, "fedmetrics-system", "holder");
  CHECK_FALSE(sim::detail::authenticate_token(world, *store, tokens, token, kNow));
}

TEST_CASE("RBAC from the stored bindings: ClusterRoleBinding everywhere, RoleBinding in its namespace",
          "[sim][access]") {
  auto store = rbac_store();
  sim::detail::ServiceAccountTokens tokens;
  sim::World world;
  auto user = sim::detail::authenticate_token(world, *store, tokens, issue(*store, tokens, 3600), kNow);
  REQUIRE(user);
  const auto& cluster_roles = *store->find_type("rbac.authorization.k8s.io", "v1", "clusterroles");
  const auto& cluster_bindings = *store->find_type("rbac.authorization.k8s.io", "v1", "clusterrolebindings");
  const auto& bindings = *store->find_type("rbac.authorization.k8s.io", "v1", "rolebindings");
  store->create(
      cluster_roles, "",
      {{"metadata", {{"name", "reader"}}},
       {"rules", {{{"apiGroups", {"cluster.karmada.io"}}, {"resources", {"clusters"}}, {"verbs", {"get", "list"}}}}}});
  store->create(cluster_roles, "",
                {{"metadata", {{"name", "leases"}}},
                 {"rules", {{{"apiGroups", {"coordination.k8s.io"}}, {"resources", {"leases"}}, {"verbs", {"*"}}}}}});
  auto allowed = [&](const json& spec) { return sim::detail::authorize_user(*store, *user, spec).allowed; };
  CHECK_FALSE(allowed(resource_spec("list", "cluster.karmada.io", "clusters")));

  json sa = {{"kind", "ServiceAccount"}, {"name", "fedmetrics"}, {"namespace", "fedmetrics-system"}};
  store->create(cluster_bindings, "",
                {{"metadata", {{"name", "reader"}}},
                 {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "reader"}}},
                 {"subjects", {sa}}});
  CHECK(allowed(resource_spec("list", "cluster.karmada.io", "clusters")));
  CHECK(allowed(resource_spec("get", "cluster.karmada.io", "clusters", "default")));
  CHECK_FALSE(allowed(resource_spec("delete", "cluster.karmada.io", "clusters")));

  // A RoleBinding to a ClusterRole grants it in the binding's namespace only.
  store->create(bindings, "kube-system",
                {{"metadata", {{"name", "leases"}}},
                 {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "leases"}}},
                 {"subjects", {{{"kind", "Group"}, {"name", "system:serviceaccounts:fedmetrics-system"}}}}});
  CHECK(allowed(resource_spec("update", "coordination.k8s.io", "leases", "kube-system")));
  CHECK_FALSE(allowed(resource_spec("update", "coordination.k8s.io", "leases", "default")));
  CHECK_FALSE(allowed(resource_spec("update", "coordination.k8s.io", "leases")));

  // Another ServiceAccount of the same name elsewhere is another subject.
  sim::detail::UserInfo other{"system:serviceaccount:default:fedmetrics", "", {"system:authenticated"}, nullptr};
  CHECK_FALSE(
      sim::detail::authorize_user(*store, other, resource_spec("list", "cluster.karmada.io", "clusters")).allowed);
}

TEST_CASE("SelfSubjectAccessReview and SelfSubjectReview answer about the caller", "[sim][access]") {
  auto store = rbac_store();
  sim::UserSpec viewer{
      "viewer", "viewer-token", {}, {"viewers"}, {{{"get", "list"}, {"apps"}, {"deployments"}, {}, {}}}};
  sim::World world;
  world.users = {viewer};
  sim::detail::ServiceAccountTokens tokens;
  auto user = sim::detail::authenticate_token(world, *store, tokens, "viewer-token", kNow);
  REQUIRE(user);
  auto ask = [&](const json& spec) {
    // The body's user is ignored: a self review is about whoever asks.
    json request = {{"spec", spec}};
    request["spec"]["user"] = "admin";
    request["spec"]["groups"] = {"system:masters"};
    auto r = sim::detail::self_subject_access_review(*store, *user, request.dump());
    REQUIRE(r.status == 201);
    auto doc = json::parse(r.body);
    CHECK(doc["kind"] == "SelfSubjectAccessReview");
    return doc["status"]["allowed"].get<bool>();
  };
  CHECK(ask(resource_spec("list", "apps", "deployments", "default")));
  CHECK_FALSE(ask(resource_spec("delete", "apps", "deployments", "default")));
  CHECK(sim::detail::self_subject_access_review(*store, *user, R"({"spec":{}})").status == 422);

  auto who = json::parse(sim::detail::self_subject_review(*user, kNow).body);
  CHECK(who["kind"] == "SelfSubjectReview");
  CHECK(who["apiVersion"] == "authentication.k8s.io/v1");
  CHECK(who["status"]["userInfo"]["username"] == "viewer");
  CHECK(who["status"]["userInfo"]["groups"] == json({"viewers", "system:authenticated"}));
}

TEST_CASE("TokenReview: a ServiceAccount token for its audiences only, a world token for any", "[sim][access]") {
  auto store = rbac_store();
  sim::detail::ServiceAccountTokens tokens;
  sim::World world;
  world.users = {sim::UserSpec{"viewer", "viewer-token", {}, {}, {}}};
  const auto api_token = issue(*store, tokens, 3600);  // for the API server's own audience
  auto r = sim::detail::token_request(*store, tokens, "fedmetrics-system", "fedmetrics",
                                      R"({"spec":{"audiences":["fedmetrics"]}})", kNow);
  REQUIRE(r.status == 201);
  const auto fedmetrics_token = json::parse(r.body)["status"]["token"].get<std::string>();
  auto review = [&](const std::string& token, const json& audiences) {
    json spec = {{"token", token}};
    if (!audiences.is_null()) spec["audiences"] = audiences;
    auto answer = sim::detail::token_review(world, *store, tokens, json{{"spec", spec}}.dump(), kNow);
    REQUIRE(answer.status == 201);
    const auto status = json::parse(answer.body)["status"];
    return status.value("authenticated", false) ? status["audiences"].dump() : std::string("no");
  };
  CHECK(review(api_token, nullptr) == R"(["https://kubernetes.default.svc.cluster.local"])");
  CHECK(review(api_token, {"fedmetrics"}) == "no");
  CHECK(review(fedmetrics_token, {"fedmetrics", "other"}) == R"(["fedmetrics"])");
  CHECK(review(fedmetrics_token, nullptr) == "no");
  CHECK(review("viewer-token", {"anything"}) == R"(["anything"])");
  CHECK(review("nope", nullptr) == "no");
}

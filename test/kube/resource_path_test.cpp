#include <catch2/catch.hpp>

#include "fedmetrics/kube/resource_path.hpp"

using fedmetrics::kube::ResourcePath;

TEST_CASE("ResourcePath: targets of the core group, named groups, namespaces and subresources", "[kube]") {
  struct Row {
    ResourcePath path;
    const char* target;
  };
  ResourcePath scale = ResourcePath::in_group("apps", "v1", "deployments", "default", "web");
  scale.subresource = "scale";
  ResourcePath status = ResourcePath::in_group("autoscaling.karmada.io", "v1alpha1", "federatedhpas", "team-a", "web");
  status.subresource = "status";
  ResourcePath orphan = ResourcePath::core("pods");
  orphan.subresource = "status";  // no name: not a subresource of anything
  const Row rows[] = {
      {ResourcePath::core("pods"), "/api/v1/pods"},
      {ResourcePath::core("pods", "kube-system"), "/api/v1/namespaces/kube-system/pods"},
      {ResourcePath::core("secrets", "karmada-cluster", "member1"),
       "/api/v1/namespaces/karmada-cluster/secrets/member1"},
      {ResourcePath::core("namespaces", "", "default"), "/api/v1/namespaces/default"},
      {ResourcePath::in_group("cluster.karmada.io", "v1alpha1", "clusters"),
       "/apis/cluster.karmada.io/v1alpha1/clusters"},
      {scale, "/apis/apps/v1/namespaces/default/deployments/web/scale"},
      {status, "/apis/autoscaling.karmada.io/v1alpha1/namespaces/team-a/federatedhpas/web/status"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.target);
    CHECK(row.path.target() == row.target);
    CHECK_FALSE(row.path.invalid());
  }
  CHECK(orphan.target() == "/api/v1/pods");
  CHECK(orphan.invalid());
}

TEST_CASE("ResourcePath: hostile names stay one segment and are escaped once", "[kube]") {
  struct Row {
    const char* name;
    const char* target;
    const char* invalid;  // what invalid() says, "" when nothing
  };
  const Row rows[] = {
      {"a/b", "/api/v1/namespaces/ns/pods/a%2Fb", "name \"a/b\": may not contain '/'"},
      {"100%", "/api/v1/namespaces/ns/pods/100%25", "name \"100%\": may not contain '%'"},
      {"%2F", "/api/v1/namespaces/ns/pods/%252F", "name \"%2F\": may not contain '%'"},  // not decoded: escaped again
      {"..", "/api/v1/namespaces/ns/pods/%2E%2E", "name \"..\": may not be '..'"},
      {".", "/api/v1/namespaces/ns/pods/%2E", "name \".\": may not be '.'"},
      {"...", "/api/v1/namespaces/ns/pods/...", ""},  // only the dot segments are special
      {"*", "/api/v1/namespaces/ns/pods/%2A", ""},    // the custom metrics wildcard, as client-go writes it
      {"a b?c#d", "/api/v1/namespaces/ns/pods/a%20b%3Fc%23d", ""},
      {"", "/api/v1/namespaces/ns/pods", ""},  // empty: the collection
  };
  for (const auto& row : rows) {
    CAPTURE(row.name);
    const auto path = ResourcePath::core("pods", "ns", row.name);
    CHECK(path.target() == row.target);
    const auto invalid = path.invalid();
    CHECK((invalid ? invalid->message : "") == std::string(row.invalid));
    if (invalid) CHECK(invalid->kind == fedmetrics::k8s::ErrorKind::Invalid);
  }
  // A namespace of "..": never a step up to the cluster scope.
  CHECK(ResourcePath::core("pods", "..", "web").target() == "/api/v1/namespaces/%2E%2E/pods/web");
}

TEST_CASE("ResourcePath: query parameters in order, escaped as Go's QueryEscape, empty ones left out", "[kube]") {
  auto path = ResourcePath::core("pods", "default");
  path.with("labelSelector", "app in (web, api),tier!=db")
      .with("fieldSelector", "")
      .with("resourceVersion", "12")
      .with("watch", "true");
  CHECK(path.target() ==
        "/api/v1/namespaces/default/"
        "pods?labelSelector=app+in+%28web%2C+api%29%2Ctier%21%3Ddb&resourceVersion=12&watch=true");
  CHECK(ResourcePath::core("pods").with("labelSelector", "").target() == "/api/v1/pods");
}

TEST_CASE("ResourcePath: what no server could serve is invalid", "[kube]") {
  struct Row {
    ResourcePath path;
    const char* message;
  };
  ResourcePath no_name = ResourcePath::core("pods", "default");
  no_name.subresource = "status";
  const Row rows[] = {
      {ResourcePath::in_group("apps", "", "deployments"), "the API version may not be empty"},
      {ResourcePath::core(""), "the resource may not be empty"},
      {no_name, "the subresource \"status\" needs a name"},
      {ResourcePath::core("pods", "a/b"), "namespace \"a/b\": may not contain '/'"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.message);
    const auto invalid = row.path.invalid();
    REQUIRE(invalid);
    CHECK(invalid->message == row.message);
  }
}

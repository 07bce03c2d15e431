// Request attributes as apiserver's RequestInfoFactory derives them
// (requestinfo.go), on the decoded path: the metrics clients' requests first, then
// upstream's other rules.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fedmetrics/auth/request_attributes.hpp"
#include "fedmetrics/k8s/url.hpp"

using namespace fedmetrics::auth;
using fedmetrics::k8s::QueryValues;

namespace {

struct Row {
  const char* method;
  const char* path;
  QueryValues query;
  RequestAttributes want;  // `path` is filled from the row
};

RequestAttributes resource(const char* verb, const char* group, const char* version, const char* ns,
                           const char* resource, const char* subresource, const char* name) {
  return RequestAttributes{true, verb, "", group, version, ns, resource, subresource, name};
}

RequestAttributes non_resource(const char* verb) { return RequestAttributes{false, verb, "", "", "", "", "", "", ""}; }

}  // namespace

TEST_CASE("Auth: request attributes", "[auth][requestinfo]") {
  const Row rows[] = {
      // What kubectl top and the HPA controller ask.
      {"GET",
       "/apis/metrics.k8s.io/v1beta1/namespaces/d/pods",
       {},
       resource("list", "metrics.k8s.io", "v1beta1", "d", "pods", "", "")},
      {"GET",
       "/apis/metrics.k8s.io/v1beta1/nodes/n1",
       {},
       resource("get", "metrics.k8s.io", "v1beta1", "", "nodes", "", "n1")},
      {"GET",
       "/apis/custom.metrics.k8s.io/v1beta2/namespaces/d/pods/*/rps",
       {},
       resource("get", "custom.metrics.k8s.io", "v1beta2", "d", "pods", "rps", "*")},
      {"GET",
       "/apis/custom.metrics.k8s.io/v1beta2/namespaces/d/metrics/rps",
       {},
       resource("get", "custom.metrics.k8s.io", "v1beta2", "d", "metrics", "", "rps")},
      {"GET",
       "/apis/external.metrics.k8s.io/v1beta1/namespaces/d/queue_len",
       {},
       resource("list", "external.metrics.k8s.io", "v1beta1", "d", "queue_len", "", "")},
      // Non-resource paths: verb is the lowercased method.
      {"GET", "/apis", {}, non_resource("get")},
      {"GET", "/apis/metrics.k8s.io", {}, non_resource("get")},
      {"GET", "/apis/metrics.k8s.io/v1beta1", {}, non_resource("get")},
      {"GET", "/apis/metrics.k8s.io/v1beta1/", {}, non_resource("get")},
      {"GET", "/api", {}, non_resource("get")},
      {"GET", "/api/v1", {}, non_resource("get")},
      {"GET", "/openapi/v2", {}, non_resource("get")},
      {"GET", "/healthz", {}, non_resource("get")},
      {"HEAD", "/version", {}, non_resource("head")},
      {"POST", "/", {}, non_resource("post")},
      {"GET", "/metrics/x/y/z", {}, non_resource("get")},
      // The core group.
      {"GET", "/api/v1/namespaces/d/pods/p1", {}, resource("get", "", "v1", "d", "pods", "", "p1")},
      {"GET", "/api/v1/nodes", {}, resource("list", "", "v1", "", "nodes", "", "")},
      {"GET", "/api/v1/namespaces", {}, resource("list", "", "v1", "", "namespaces", "", "")},
      {"GET", "/api/v1/namespaces/d", {}, resource("get", "", "v1", "d", "namespaces", "", "d")},
      {"PUT", "/api/v1/namespaces/d/status", {}, resource("update", "", "v1", "d", "namespaces", "status", "d")},
      {"PUT", "/api/v1/namespaces/d/finalize", {}, resource("update", "", "v1", "d", "namespaces", "finalize", "d")},
      // Lists become watches; fieldSelector metadata.name names the object.
      {"GET",
       "/apis/metrics.k8s.io/v1beta1/pods",
       {{"watch", "true"}},
       resource("watch", "metrics.k8s.io", "v1beta1", "", "pods", "", "")},
      {"GET",
       "/apis/metrics.k8s.io/v1beta1/pods",
       {{"watch", "1"}},
       resource("watch", "metrics.k8s.io", "v1beta1", "", "pods", "", "")},
      {"GET",
       "/apis/metrics.k8s.io/v1beta1/pods",
       {{"watch", "FALSE"}},
       resource("list", "metrics.k8s.io", "v1beta1", "", "pods", "", "")},
      {"GET",
       "/apis/metrics.k8s.io/v1beta1/pods",
       {{"watch", "0"}},
       resource("list", "metrics.k8s.io", "v1beta1", "", "pods", "", "")},
      {"GET",
       "/apis/metrics.k8s.io/v1beta1/namespaces/d/pods",
       {{"fieldSelector", "metadata.name=p1"}},
       resource("list", "metrics.k8s.io", "v1beta1", "d", "pods", "", "p1")},
      {"GET",
       "/apis/metrics.k8s.io/v1beta1/pods",
       {{"fieldSelector", "metadata.namespace=d,metadata.name==p1"}},
       resource("list", "metrics.k8s.io", "v1beta1", "", "pods", "", "p1")},
      {"GET",
       "/apis/metrics.k8s.io/v1beta1/pods",
       {{"fieldSelector", "metadata.name!=p1"}},
       resource("list", "metrics.k8s.io", "v1beta1", "", "pods", "", "")},
      {"GET",
       "/apis/metrics.k8s.io/v1beta1/pods",
       {{"fieldSelector", "metadata.name=.."}},
       resource("list", "metrics.k8s.io", "v1beta1", "", "pods", "", "")},
      {"GET",
       "/apis/metrics.k8s.io/v1beta1/pods",
       {{"fieldSelector", "metadata.name=a=b"}},
       resource("list", "metrics.k8s.io", "v1beta1", "", "pods", "", "")},
      {"GET",
       "/apis/metrics.k8s.io/v1beta1/nodes/n1",
       {{"fieldSelector", "metadata.name=n2"}, {"watch", "true"}},
       resource("get", "metrics.k8s.io", "v1beta1", "", "nodes", "", "n1")},
      // Other methods.
      {"POST",
       "/apis/apps/v1/namespaces/d/deployments",
       {},
       resource("create", "apps", "v1", "d", "deployments", "", "")},
      {"PATCH",
       "/apis/apps/v1/namespaces/d/deployments/web/scale",
       {},
       resource("patch", "apps", "v1", "d", "deployments", "scale", "web")},
      {"DELETE",
       "/apis/apps/v1/namespaces/d/deployments/web",
       {},
       resource("delete", "apps", "v1", "d", "deployments", "", "web")},
      {"DELETE",
       "/apis/apps/v1/namespaces/d/deployments",
       {},
       resource("deletecollection", "apps", "v1", "d", "deployments", "", "")},
      {"OPTIONS", "/apis/apps/v1/deployments", {}, resource("", "apps", "v1", "", "deployments", "", "")},
      // Verbs in the path.
      {"GET",
       "/apis/metrics.k8s.io/v1beta1/watch/namespaces/d/pods",
       {},
       resource("watch", "metrics.k8s.io", "v1beta1", "d", "pods", "", "")},
      {"GET", "/api/v1/proxy/namespaces/d/pods/p1/a/b", {}, resource("proxy", "", "v1", "d", "pods", "", "p1")},
  };
  for (const auto& row : rows) {
    INFO(row.method << " " << row.path);
    auto got = request_attributes(row.method, row.path, row.query);
    REQUIRE(got);
    RequestAttributes want = row.want;
    want.path = row.path;
    CHECK(got->resource_request == want.resource_request);
    CHECK(got->verb == want.verb);
    CHECK(got->api_group == want.api_group);
    CHECK(got->api_version == want.api_version);
    CHECK(got->namespace_name == want.namespace_name);
    CHECK(got->resource == want.resource);
    CHECK(got->subresource == want.subresource);
    CHECK(got->name == want.name);
    RequestAttributes without_parts = *got;  // parts and verb_in_path: the next test cases
    without_parts.parts.clear();
    without_parts.verb_in_path = false;
    CHECK(without_parts == want);
  }
}

TEST_CASE("Auth: a resource request's parts are its path from the resource on, never the fieldSelector's name",
          "[auth][requestinfo]") {
  using Parts = std::vector<std::string>;
  const struct {
    const char* method;
    const char* path;
    QueryValues query;
    Parts parts;
  } rows[] = {
      {"GET", "/api/v1/pods", {}, {"pods"}},
      {"GET", "/api/v1/namespaces/d/pods", {{"fieldSelector", "metadata.name=p1"}}, {"pods"}},
      {"GET", "/api/v1/namespaces/d/pods/p1", {}, {"pods", "p1"}},
      {"GET", "/api/v1/namespaces", {}, {"namespaces"}},
      {"GET", "/api/v1/namespaces/d", {}, {"namespaces", "d"}},
      {"PUT", "/api/v1/namespaces/d/status", {}, {"namespaces", "d", "status"}},
      {"PATCH", "/apis/apps/v1/namespaces/d/deployments/web/scale", {}, {"deployments", "web", "scale"}},
      // A proxy's path follows the subresource.
      {"GET",
       "/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy/api/v1/pods",
       {},
       {"clusters", "m1", "proxy", "api", "v1", "pods"}},
      {"GET", "/api/v1/proxy/namespaces/d/pods/p1/a/b", {}, {"pods", "p1", "a", "b"}},
      {"GET", "/apis/metrics.k8s.io/v1beta1/watch/namespaces/d/pods", {}, {"pods"}},
      // Non-resource requests have none.
      {"GET", "/apis/metrics.k8s.io/v1beta1", {}, {}},
      {"GET", "/healthz", {}, {}},
  };
  for (const auto& row : rows) {
    INFO(row.method << " " << row.path);
    auto got = request_attributes(row.method, row.path, row.query);
    REQUIRE(got);
    CHECK(got->parts == row.parts);
  }
  auto listed = request_attributes("GET", "/api/v1/namespaces/d/pods", {{"fieldSelector", "metadata.name=p1"}});
  REQUIRE(listed);
  CHECK(listed->name == "p1");       // what the authorizer is asked about
  CHECK(listed->parts.size() == 1);  // what the path names: the collection
}

TEST_CASE("Auth: a verb segment with nothing after it is an error, as upstream", "[auth][requestinfo]") {
  auto got = request_attributes("GET", "/apis/metrics.k8s.io/v1beta1/watch", {});
  REQUIRE_FALSE(got);
  CHECK(got.error().message == "unable to determine kind and namespace from url, /apis/metrics.k8s.io/v1beta1/watch");
}

TEST_CASE("Auth: the verb taken from a deprecated path form is told apart from the method's", "[auth][requestinfo]") {
  const struct {
    const char* path;
    QueryValues query;
    const char* verb;
    bool verb_in_path;
  } rows[] = {
      {"/apis/metrics.k8s.io/v1beta1/watch/namespaces/d/pods", {}, "watch", true},
      {"/api/v1/watch/pods", {}, "watch", true},
      {"/api/v1/proxy/namespaces/d/pods/p1/a/b", {}, "proxy", true},
      {"/api/v1/namespaces/d/pods", {{"watch", "true"}}, "watch", false},
      // A resource or object named "watch" or "proxy" is no verb.
      {"/api/v1/namespaces/watch/pods", {}, "list", false},
      {"/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy/api/v1/pods", {}, "get", false},
      {"/apis/metrics.k8s.io/v1beta1", {}, "get", false},
  };
  for (const auto& row : rows) {
    INFO(row.path);
    auto got = request_attributes("GET", row.path, row.query);
    REQUIRE(got);
    CHECK(got->verb == row.verb);
    CHECK(got->verb_in_path == row.verb_in_path);
  }
}

TEST_CASE("Auth: request attributes of a target the URL decoder split, empty segments dropped", "[auth][requestinfo]") {
  const struct {
    const char* target;
    const char* path;
    QueryValues query;
  } rows[] = {
      {"/apis//metrics.k8s.io/v1beta1/namespaces/d/pods?watch=1",
       "/apis/metrics.k8s.io/v1beta1/namespaces/d/pods",
       {{"watch", "1"}}},
      {"/api/v1/namespaces/d/pods/p%31", "/api/v1/namespaces/d/pods/p1", {}},
      {"/", "/", {}},
      {"", "/", {}},
  };
  for (const auto& row : rows) {
    INFO(row.target);
    auto target = fedmetrics::k8s::parse_request_target(row.target);
    REQUIRE(target);
    auto got = request_attributes("GET", *target);
    auto want = request_attributes("GET", row.path, row.query);
    REQUIRE(got);
    REQUIRE(want);
    CHECK(*got == *want);
    CHECK(got->path == row.path);
  }
}

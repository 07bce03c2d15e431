// Distributed mode's writes against the simulated world, as the live loop
// will make them: member HPAs created, read, updated (conditionally) and
// deleted on one member, directly with the member's credentials and through
// the control plane's cluster proxy (--member-access=proxy); the retain label
// on the target template and the distribution annotation on the FederatedHPA.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <atomic>
#include <functional>
#include <future>
#include <thread>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "fedmetrics/autoscaler/distributor.hpp"
#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/kube/kubeconfig.hpp"
#include "fedmetrics/clusterclient/member_plan.hpp"
#include "fedmetrics/controller/member_hpa.hpp"
#include "fedmetrics/transport/async.hpp"
#include "fedmetrics/kubeclient/rest_control_plane.hpp"
#include "fedmetrics/kubeclient/rest_member_hpas.hpp"

namespace fedmetrics {
namespace {

using namespace std::chrono_literals;
using kube::ClusterEndpoint;
using nlohmann::json;

struct World {
  std::filesystem::path dir;
  std::unique_ptr<testing::ChildProcess> sim;
  std::map<std::string, ClusterEndpoint> members;
  ClusterEndpoint control_plane;

  World() {
    dir = std::filesystem::temp_directory_path() / ("fedmetrics-dist-it-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    sim = std::make_unique<testing::ChildProcess>(
        std::vector<std::string>{FEDMETRICS_BINARY, "sim", "--world",
                                 FEDMETRICS_SOURCE_DIR "/test/e2e/karmada.world.yaml", "--out-dir", dir.string()});
    sim->read_until("world ready", 10s);
    auto loaded = kube::load_kubeconfig((dir / "members.kubeconfig").string());
    if (!loaded) throw std::runtime_error(loaded.error().message);
    for (auto& e : *loaded) members[e.name] = e;
    auto cp = kube::load_kubeconfig_current_context(kubeconfig());
    if (!cp) throw std::runtime_error(cp.error().message);
    control_plane = *cp;
  }
  ~World() {
    sim.reset();
    std::filesystem::remove_all(dir);
  }
  [[nodiscard]] std::string kubeconfig() const { return (dir / "karmada.kubeconfig").string(); }
  // The member reached as --member-access=proxy reaches it: the control
  // plane's credentials on its cluster proxy.
  [[nodiscard]] ClusterEndpoint through_proxy(const std::string& member) const {
    ClusterEndpoint e = control_plane;
    e.name = member;
    e.server = clusterclient::cluster_proxy_server(control_plane.server, member);
    return e;
  }
  static World& get() {
    static World world;
    return world;
  }
};

// Waits for a callback-style answer (the HTTPS client's).
template <class T, class F>
k8s::Expected<T> wait_for(F&& start) {
  auto promise = std::make_shared<std::promise<k8s::Expected<T>>>();
  auto future = promise->get_future();
  start([promise](k8s::Expected<T> result) { promise->set_value(std::move(result)); });
  if (future.wait_for(15s) != std::future_status::ready) throw std::runtime_error("no answer within 15 s");
  return future.get();
}

template <class T>
async::Task<void> into(async::Task<k8s::Expected<T>> task, std::optional<k8s::Expected<T>>* out) {
  *out = co_await std::move(task);
}

// Runs a port's call on the runtime and waits for its answer (the client
// answers by its deadline).
template <class T>
k8s::Expected<T> answer(kube::ClientRuntime& runtime, async::Task<k8s::Expected<T>> task) {
  std::optional<k8s::Expected<T>> out;
  async::run_and_wait(async::make_strand(runtime.executor()), [&] { return into<T>(std::move(task), &out); });
  return std::move(*out);
}

json federated_hpa() {
  return json::parse(R"({
    "apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA",
    "metadata": {"name": "nginx", "namespace": "default",
                 "annotations": {"autoscaling.fedmetrics.io/mode": "distributed"}},
    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"},
             "minReplicas": 2, "maxReplicas": 9,
             "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}],
             "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}})");
}

// A GET on the control plane, for checking what the patches did.
json control_plane_get(kube::ClientRuntime& runtime, const std::string& path) {
  kube::HttpsClient client(runtime, World::get().control_plane);
  auto result = wait_for<json>([&](auto done) {
    client.get(path, std::chrono::steady_clock::now() + 10s, [done](kube::HttpResult r) {
      auto* reply = std::get_if<kube::HttpReply>(&r);
      if (reply == nullptr || reply->status != 200) return done(k8s::Error{kube::describe(r)});
      done(json::parse(reply->body));
    });
  });
  if (!result) throw std::runtime_error(result.error().message);
  return *result;
}

// POSTs `object` to the control plane's collection `path` as kubectl would; the HTTP status.
int control_plane_post(kube::ClientRuntime& runtime, const std::string& path, const json& object) {
  kube::HttpsClient client(runtime, World::get().control_plane);
  kube::OutgoingRequest post;
  post.method = "POST";
  post.target = path;
  post.content_type = "application/json";
  post.body = object.dump();
  auto status = wait_for<int>([&](auto done) {
    client.send(post, std::chrono::steady_clock::now() + 10s, [done](kube::HttpResult r) {
      auto* reply = std::get_if<kube::HttpReply>(&r);
      done(reply != nullptr ? reply->status : 0);
    });
  });
  return status ? *status : 0;
}

TEST_CASE("member HPAs over HTTPS: direct and through the cluster proxy", "[integration][distributed]") {
  World& world = World::get();
  kube::ClientRuntime runtime;
  const bool proxy = GENERATE(false, true);
  INFO((proxy ? "through the cluster proxy" : "directly"));
  auto endpoint_of = [&](const std::string& member) {
    return proxy ? world.through_proxy(member) : world.members.at(member);
  };
  auto member1 = kubeclient::make_member_hpas(runtime, endpoint_of("member1"), 10s);
  auto member2 = kubeclient::make_member_hpas(runtime, endpoint_of("member2"), 10s);
  CHECK(member1->member() == "member1");
  const json fhpa = federated_hpa();
  const k8s::LabelSelector ours = controller::member_hpa_selector("nginx");

  // Whether a member has the target (distributed mode without a binding):
  // nginx is propagated to member1 and member2, not member3.
  autoscaler::CrossVersionObjectReference nginx{"Deployment", "nginx", "apps/v1"};
  auto has = answer(runtime, member1->has_target("default", nginx));
  REQUIRE(has);
  CHECK(*has);
  auto member3 = kubeclient::make_member_hpas(runtime, endpoint_of("member3"), 10s);
  auto lacks = answer(runtime, member3->has_target("default", nginx));
  REQUIRE(lacks);
  CHECK_FALSE(*lacks);
  autoscaler::CrossVersionObjectReference other{"Deployment", "other", "apps/v1"};
  auto unknown = answer(runtime, member1->has_target("default", other));
  REQUIRE(unknown);
  CHECK_FALSE(*unknown);

  // Nothing there at first: the plan says create.
  auto absent = answer(runtime, member1->get("default", "nginx"));
  REQUIRE(absent);
  REQUIRE_FALSE(absent->has_value());
  autoscaler::MemberDecision decision{{1, 3}, autoscaler::MemberAction::Create};
  auto plan = controller::plan_member_hpa(fhpa, "member1", decision, *absent);
  REQUIRE(plan.op == controller::MemberHPAOp::Create);
  auto created = answer(runtime, member1->create(plan.object));
  REQUIRE(created);
  CHECK((*created)["spec"]["maxReplicas"] == 3);
  CHECK_FALSE((*created)["metadata"]["resourceVersion"].get<std::string>().empty());

  // Read back as the member stores it (defaulted): equal, so nothing to do.
  auto stored = answer(runtime, member1->get("default", "nginx"));
  REQUIRE(stored);
  REQUIRE(stored->has_value());
  CHECK(controller::plan_member_hpa(fhpa, "member1", {{1, 3}, autoscaler::MemberAction::None}, *stored).op ==
        controller::MemberHPAOp::None);
  autoscaler::DistributionMember observed;
  controller::observe_member_hpa(observed, *stored);
  CHECK(observed.state == autoscaler::MemberHPAState::Read);
  CHECK(observed.hpa.max_replicas == 3);

  auto listed = answer(runtime, member1->list("", ours));
  REQUIRE(listed);
  REQUIRE(listed->size() == 1);
  CHECK((*listed)[0]["metadata"]["name"] == "nginx");
  auto elsewhere = answer(runtime, member2->list("default", ours));
  REQUIRE(elsewhere);
  CHECK(elsewhere->empty());  // each member its own

  // Create again: the member's AlreadyExists, naming the member.
  auto again = answer(runtime, member1->create(plan.object));
  REQUIRE_FALSE(again);
  CHECK_THAT(again.error().message, Catch::StartsWith("member1: POST /apis/autoscaling/v2/namespaces/default/"
                                                      "horizontalpodautoscalers: "));
  CHECK_THAT(again.error().message, Catch::Contains("already exists"));

  // Max moved: a conditional update.
  auto update = controller::plan_member_hpa(fhpa, "member1", {{1, 5}, autoscaler::MemberAction::Update}, **stored);
  REQUIRE(update.op == controller::MemberHPAOp::Update);
  auto updated = answer(runtime, member1->update(update.object));
  REQUIRE(updated);
  CHECK((*updated)["spec"]["maxReplicas"] == 5);
  // The same update again carries the old resourceVersion: the member's Conflict.
  auto stale = answer(runtime, member1->update(update.object));
  REQUIRE_FALSE(stale);
  CHECK_THAT(stale.error().message, Catch::Contains("the object has been modified"));
  json no_version = update.object;
  no_version["metadata"].erase("resourceVersion");
  auto unconditional = answer(runtime, member1->update(no_version));
  REQUIRE_FALSE(unconditional);
  CHECK_THAT(unconditional.error().message, Catch::Contains("resourceVersion"));

  // An HPA of that name that fedmetrics did not create, on member2: refused, and left as it is.
  json foreign = plan.object;
  foreign["metadata"].erase("labels");
  REQUIRE(answer(runtime, member2->create(foreign)));
  auto theirs = answer(runtime, member2->get("default", "nginx"));
  REQUIRE(theirs);
  auto refused = controller::plan_member_hpa(fhpa, "member2", {{1, 6}, autoscaler::MemberAction::Update}, *theirs);
  CHECK(refused.op == controller::MemberHPAOp::Refuse);
  CHECK_THAT(refused.message, Catch::StartsWith("member2 has a HorizontalPodAutoscaler default/nginx"));
  auto none_of_ours = answer(runtime, member2->list("default", ours));
  REQUIRE(none_of_ours);
  CHECK(none_of_ours->empty());

  // Delete with the uid read as precondition: another uid is a 409 and the
  // HPA stays; the right one deletes it; then false (already gone), then the
  // get says absent.
  for (auto* m : {member1.get(), member2.get()}) {
    auto read = answer(runtime, m->get("default", "nginx"));
    REQUIRE(read);
    REQUIRE(read->has_value());
    const std::string uid = (**read)["metadata"]["uid"];
    auto stale = answer(runtime, m->remove("default", "nginx", "not-" + uid));
    REQUIRE_FALSE(stale);
    CHECK_THAT(stale.error().message, Catch::Contains("Precondition failed: UID in precondition: not-" + uid));
    auto still = answer(runtime, m->get("default", "nginx"));
    REQUIRE(still);
    CHECK(still->has_value());
    auto deleted = answer(runtime, m->remove("default", "nginx", uid));
    REQUIRE(deleted);
    CHECK(*deleted);
    auto gone = answer(runtime, m->remove("default", "nginx", ""));
    REQUIRE(gone);
    CHECK_FALSE(*gone);
  }
  auto after = answer(runtime, member1->get("default", "nginx"));
  REQUIRE(after);
  CHECK_FALSE(after->has_value());
  runtime.stop();
}

TEST_CASE("control plane: the retain label and the distribution annotation", "[integration][distributed]") {
  World& world = World::get();
  kube::ClientRuntime runtime;
  auto control_plane = std::make_shared<kubeclient::RestControlPlane>(runtime, world.kubeconfig(), 10s);
  const autoscaler::CrossVersionObjectReference target{"Deployment", "nginx", "apps/v1"};
  const std::string deployment = "/apis/apps/v1/namespaces/default/deployments/nginx";
  const json before = control_plane_get(runtime, deployment);

  auto labelled = answer(runtime, control_plane->set_retain_replicas("default", target, true));
  REQUIRE(labelled);
  json d = control_plane_get(runtime, deployment);
  CHECK(d["metadata"]["labels"]["resourcetemplate.karmada.io/retain-replicas"] == "true");
  const json before_labels = before["metadata"].value("labels", json::object());
  REQUIRE_FALSE(before_labels.empty());
  for (const auto& [key, value] : before_labels.items()) {
    INFO(key);
    CHECK(d["metadata"]["labels"][key] == value);  // the other labels kept
  }
  CHECK(d["spec"]["replicas"] == before["spec"]["replicas"]);

  auto unlabelled = answer(runtime, control_plane->set_retain_replicas("default", target, false));
  REQUIRE(unlabelled);
  CHECK_FALSE(control_plane_get(runtime, deployment)["metadata"]
                  .value("labels", json::object())
                  .contains("resourcetemplate.karmada.io/retain-replicas"));

  const autoscaler::CrossVersionObjectReference missing{"Deployment", "nowhere", "apps/v1"};
  auto no_template = answer(runtime, control_plane->set_retain_replicas("default", missing, true));
  REQUIRE_FALSE(no_template);
  CHECK_THAT(no_template.error().message, Catch::Contains("not found"));

  // The FederatedHPA, created in the control plane as kubectl would.
  REQUIRE(control_plane_post(runtime, "/apis/autoscaling.karmada.io/v1alpha1/namespaces/default/federatedhpas",
                             federated_hpa()) == 201);
  const std::string fhpa = "/apis/autoscaling.karmada.io/v1alpha1/namespaces/default/federatedhpas/nginx";
  const std::string shares = autoscaler::distribution_annotation({{"member1", {1, 6}}, {"member2", {1, 3}}});
  auto annotated = answer(runtime, control_plane->set_distribution_annotation("default", "nginx", shares));
  REQUIRE(annotated);
  json f = control_plane_get(runtime, fhpa);
  CHECK(f["metadata"]["annotations"]["autoscaling.fedmetrics.io/distribution"] == shares);
  CHECK(f["metadata"]["annotations"]["autoscaling.fedmetrics.io/mode"] == "distributed");  // kept
  auto parsed = autoscaler::parse_distribution_annotation(
      f["metadata"]["annotations"]["autoscaling.fedmetrics.io/distribution"].get<std::string>());
  REQUIRE(parsed);
  CHECK(parsed->at("member1").max_replicas == 6);

  auto cleared = answer(runtime, control_plane->set_distribution_annotation("default", "nginx", std::nullopt));
  REQUIRE(cleared);
  f = control_plane_get(runtime, fhpa);
  CHECK_FALSE(f["metadata"]["annotations"].contains("autoscaling.fedmetrics.io/distribution"));
  CHECK(f["metadata"]["annotations"]["autoscaling.fedmetrics.io/mode"] == "distributed");

  auto no_fhpa = answer(runtime, control_plane->set_distribution_annotation("default", "other", shares));
  REQUIRE_FALSE(no_fhpa);
  CHECK_THAT(no_fhpa.error().message, Catch::Contains("not found"));
  runtime.stop();
}

TEST_CASE("control plane: CronFederatedHPAs, a FederatedHPA's min and max, the cron status", "[integration][cron]") {
  kube::ClientRuntime runtime;
  auto control_plane = std::make_shared<kubeclient::RestControlPlane>(runtime, World::get().kubeconfig(), 10s);
  kubeclient::RestCronStore crons(control_plane);
  const std::string base = "/apis/autoscaling.karmada.io/v1alpha1/namespaces/default/";
  REQUIRE(control_plane_post(runtime, base + "federatedhpas", federated_hpa()) == 201);
  const json cron = json::parse(R"({"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "CronFederatedHPA",
      "metadata": {"name": "nginx-hours", "namespace": "default", "labels": {"team": "web"}},
      "spec": {"scaleTargetRef": {"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA", "name": "nginx"},
               "rules": [{"name": "morning", "schedule": "30 8 * * 1-5", "targetMinReplicas": 4}]}})");
  REQUIRE(control_plane_post(runtime, base + "cronfederatedhpas", cron) == 201);

  auto listed = answer(runtime, crons.list(*k8s::LabelSelector::parse("team=web")));
  REQUIRE(listed);
  REQUIRE(listed->size() == 1);
  CHECK((*listed)[0]["metadata"]["name"] == "nginx-hours");
  auto none = answer(runtime, crons.list(*k8s::LabelSelector::parse("team=other")));
  REQUIRE(none);
  CHECK(none->empty());

  // min and max in one write, conditional on the resourceVersion read.
  auto fhpa = answer(runtime, control_plane->get("default", "nginx"));
  REQUIRE(fhpa);
  const std::string rv = (*fhpa)["metadata"]["resourceVersion"];
  auto written = answer(runtime, control_plane->update_replicas("default", "nginx", 4, 12, rv));
  REQUIRE(written);
  json after = control_plane_get(runtime, base + "federatedhpas/nginx");
  CHECK(after["spec"]["minReplicas"] == 4);
  CHECK(after["spec"]["maxReplicas"] == 12);
  CHECK(after["spec"]["metrics"] == (*fhpa)["spec"]["metrics"]);  // the rest kept
  auto stale =
      answer(runtime, control_plane->update_replicas("default", "nginx", 1, 2, rv));  // the old resourceVersion
  REQUIRE_FALSE(stale);
  CHECK_THAT(stale.error().message, Catch::Contains("the object has been modified"));
  CHECK(control_plane_get(runtime, base + "federatedhpas/nginx")["spec"]["minReplicas"] == 4);
  auto missing = answer(runtime, control_plane->get("default", "nowhere"));
  REQUIRE_FALSE(missing);

  // Watched: a change is reported (the list stays a read from the server).
  auto changes = std::make_shared<std::atomic<int>>(0);
  auto eventually = [](const std::function<bool()>& condition) {
    for (int i = 0; i < 1000 && !condition(); ++i) std::this_thread::sleep_for(10ms);
    return condition();
  };
  auto watch = crons.watch(*k8s::LabelSelector::parse("team=web"), [changes] { ++*changes; });
  REQUIRE(eventually([&] { return changes->load() >= 1; }));  // the first list
  json second = cron;
  second["metadata"]["name"] = "nginx-nights";
  const int before = changes->load();
  REQUIRE(control_plane_post(runtime, base + "cronfederatedhpas", second) == 201);
  REQUIRE(eventually([&] { return changes->load() > before; }));
  auto watched = answer(runtime, crons.list(*k8s::LabelSelector::parse("team=web")));
  REQUIRE(watched);
  CHECK(watched->size() == 2);

  // The status subresource, replaced as a whole list.
  const json status = json::parse(R"({"executionHistories": [{"ruleName": "morning",
      "nextExecutionTime": "2026-11-26T08:30:00Z",
      "successfulExecutions": [{"scheduleTime": "2026-11-25T08:30:00Z", "executionTime": "2026-11-25T08:30:00Z",
                                "appliedMinReplicas": 4, "appliedMaxReplicas": 12}]}]})");
  auto recorded = answer(runtime, crons.update_status("default", "nginx-hours", status));
  REQUIRE(recorded);
  json stored = control_plane_get(runtime, base + "cronfederatedhpas/nginx-hours");
  CHECK(stored["status"] == status);
  CHECK(stored["spec"] == cron["spec"]);
  watch.reset();
  runtime.stop();
}

}  // namespace
}  // namespace fedmetrics

#include <utility>  // before Asio's awaitable.hpp (GCC 12 coroutines)

#include "sim/simulation.hpp"

#include "fedmetrics/transport/async.hpp"

#include <spdlog/spdlog.h>

#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/sim/control_api.hpp"
#include "fedmetrics/sim/member_api.hpp"
#include "sim/http_util.hpp"
#include "sim/member_pod_watch.hpp"

namespace fedmetrics::sim::detail {
namespace {

// How long a black hole holds a request whose client stays connected.
constexpr auto kBlackholeCap = std::chrono::minutes(10);

}  // namespace

k8s::Timestamp wall_now() {
  return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
}

double Simulation::draw(std::size_t member) {
  std::lock_guard lock(*rng_mutexes[member]);
  return std::uniform_real_distribution<double>(0.0, 1.0)(rngs[member]);
}

void Simulation::apply_listener_faults(std::size_t i, const Faults& before, const Faults& after) {
  if (before.refuse != after.refuse) members[i]->set_accepting(!after.refuse);
  if (before.wrong_certificate != after.wrong_certificate) {
    const auto& c = certificates[i];
    if (after.wrong_certificate) members[i]->set_certificate(c.wrong_cert_file, c.wrong_key_file);
    else members[i]->set_certificate(c.cert_file, c.key_file);
  }
}

async::Task<HttpResponse> Simulation::handle_member(std::size_t i, HttpRequest request) {
  auto snapshot = state.load();
  const auto& faults = snapshot->members[i].faults;
  if (faults.blackhole) {
    // Never answers; the listener cancels this wait when the client goes.
    const bool held = co_await async::sleep_for(kBlackholeCap);
    (void)held;  // cancelled or not, the connection closes unanswered
    co_return HttpResponse{0, {}, {}, {}};
  }
  if (auto watch = watch_member_pods(*this, i, request))
    co_return std::move(*watch);  // a stream: no latency, no fault but refusal
  const auto& name = snapshot->world.members[i].name;
  HttpResponse response;
  if (request.target == kPodCountersPath && request.method == "GET") {
    response = member_authenticated(*snapshot, i, request) ? pod_counters[i]->scrape(*snapshot, i, wall_now())
                                                           : status_response(k8s::Status::unauthorized());
  } else if (MemberObjects::handles(request)) {
    response = member_objects[i]->handle(*snapshot, i, request, draw(i));
  } else {
    response = MemberApi(*snapshot, i).handle(request, wall_now(), draw(i));
  }
  spdlog::debug("{} {} {} -> {}", name, request.method, request.target, response.status);
  // The member's latency, and the fault's, before the answer (a watch's events come as they happen).
  const auto delay = snapshot->world.members[i].latency + faults.latency;
  if (delay.count() > 0 && !response.stream) {
    const bool waited = co_await async::sleep_for(delay);
    (void)waited;  // cancelled: the server sends nothing anyway
  }
  co_return response;
}

void Simulation::set_member_replicas(std::size_t workload, std::size_t member, std::int32_t replicas,
                                     const std::string& reason) {
  std::lock_guard lock(write_mutex);
  auto current = state.load();
  auto next = std::make_shared<const Federation>(current->with_member_replicas(workload, member, replicas, wall_now()));
  state.store(next);
  if (next->workloads[workload].retain_replicas) karmada->sync_replicas(*next);
  spdlog::info("{}: horizontal-pod-autoscaler scaled {}/{} to {}: {}", current->world.members[member].name,
               current->world.workloads[workload].namespace_name, current->world.workloads[workload].name, replicas,
               reason);
}

void Simulation::resync_member_hpas(std::size_t i) {
  auto& objects = *member_objects[i];
  auto list = objects.store().list(objects.hpa_type(), "", {}, {});
  const auto* hpas = std::get_if<nlohmann::json>(&list);
  if (hpas == nullptr) return;
  for (auto& action : hpa_controllers[i].sync(*state.load(), i, *hpas, wall_now())) {
    if (action.scale) set_member_replicas(action.scale->first, i, action.scale->second, action.scale_reason);
    nlohmann::json object = {{"metadata", {{"name", action.name}, {"namespace", action.namespace_name}}},
                             {"status", std::move(action.status)}};
    auto written =
        objects.store().update(objects.hpa_type(), action.namespace_name, action.name, std::move(object), "status");
    if (auto* failed = std::get_if<k8s::Status>(&written))  // deleted meanwhile: nothing to do
      spdlog::debug("member {}: HPA {}/{} status not written: {}", i, action.namespace_name, action.name,
                    failed->message);
  }
}

void Simulation::schedule_member_hpa_resync(std::size_t i, std::chrono::nanoseconds period) {
  members[i]->schedule(period, [this, i, period] {
    resync_member_hpas(i);
    schedule_member_hpa_resync(i, period);
  });
}

void Simulation::apply_scheduled_load(std::size_t workload, const Load& load) {
  std::lock_guard lock(write_mutex);
  auto current = state.load();
  state.store(std::make_shared<const Federation>(current->with_load(workload, load)));
  spdlog::info("load schedule: {}/{} now cpu {} and {} requests/s", current->world.workloads[workload].namespace_name,
               current->world.workloads[workload].name, load.cpu.to_string(), load.requests_per_second.to_string());
}

void Simulation::set_replicas(std::size_t workload, std::int32_t replicas) {
  std::lock_guard lock(write_mutex);
  auto current = state.load();
  if (current->workloads[workload].replicas == replicas) return;
  auto next = std::make_shared<const Federation>(current->with_replicas(workload, replicas, wall_now()));
  state.store(next);
  if (next->workloads[workload].retain_replicas) {
    // The members keep theirs; the template goes back to their sum.
    spdlog::info("karmada: {}/{} retains its members' replicas: spec.replicas {} back to {}",
                 current->world.workloads[workload].namespace_name, current->world.workloads[workload].name, replicas,
                 next->workloads[workload].replicas);
    karmada->sync_replicas(*next);
    return;
  }
  spdlog::info("karmada: {}/{} scaled to {}", current->world.workloads[workload].namespace_name,
               current->world.workloads[workload].name, replicas);
}

void Simulation::set_retain_replicas(std::size_t workload, bool retain) {
  std::lock_guard lock(write_mutex);
  auto current = state.load();
  if (current->workloads[workload].retain_replicas == retain) return;
  auto next = std::make_shared<const Federation>(current->with_retain_replicas(workload, retain));
  state.store(next);
  spdlog::info("karmada: {}/{} {} its members' replicas", current->world.workloads[workload].namespace_name,
               current->world.workloads[workload].name, retain ? "retains" : "no longer retains");
  if (retain) karmada->sync_replicas(*next);
}

void Simulation::update_cluster_conditions(const Federation& f) {
  for (std::size_t i = 0; i < f.members.size(); ++i) {
    const auto& faults = f.members[i].faults;
    bool ready = !faults.refuse && !faults.blackhole && !faults.wrong_certificate;
    karmada->set_cluster_ready(f.world.members[i].name, ready,
                               ready ? "cluster is healthy and ready to accept workloads" : "cluster is not reachable");
  }
}

kube::HttpsClient& Simulation::upstream(const Upstream& up) {
  std::lock_guard lock(upstreams_mutex);
  auto& client = upstreams[up.key()];
  if (!client) {
    kube::ClusterEndpoint endpoint;
    endpoint.name = up.server;
    endpoint.server = up.server;
    endpoint.ca_pem = up.ca_pem;
    endpoint.insecure_skip_tls_verify = up.insecure;
    endpoint.tls_server_name = up.server_name;
    endpoint.token = up.token;
    if (up.front_proxy) {
      endpoint.client_cert_pem = front_proxy_cert_pem;
      endpoint.client_key_pem = front_proxy_key_pem;
    }
    client = std::make_unique<kube::HttpsClient>(*runtime, std::move(endpoint));
  }
  return *client;
}

void Simulation::request_probe() {
  probe_requested = true;
  if (probe_wakeup) probe_wakeup->notify();
}

async::Task<void> Simulation::probe_apiservices_loop() {
  constexpr auto kRecheck = std::chrono::seconds(1);
  constexpr auto kResync = std::chrono::seconds(30);
  auto last_full_probe = std::chrono::steady_clock::now();
  for (;;) {
    const bool running = co_await probe_wakeup->wait_for(kRecheck);
    if (!running) co_return;
    const auto now = std::chrono::steady_clock::now();
    const bool requested = probe_requested.exchange(false);
    const bool due = any_unavailable.exchange(false) || now - last_full_probe >= kResync;
    if (due) last_full_probe = now;
    if (!requested && !due) continue;
    try {
      co_await probe_apiservices();
    } catch (const std::exception& e) {
      if (async::is_cancellation(e)) throw;
      spdlog::warn("karmada: the APIServices' availability check failed: {}", e.what());
    }
  }
}

async::Task<void> Simulation::probe_apiservices() {
  std::vector<async::Task<void>> probes;
  for (auto& t : karmada->availability_targets()) probes.push_back(probe_apiservice(std::move(t)));
  co_await async::when_all(std::move(probes));
}

async::Task<void> Simulation::probe_apiservice(KarmadaApi::AvailabilityTarget t) {
  if (!t.upstream) {
    karmada->set_available(t.name, false, "ServiceNotFound", t.unreachable);
    karmada->set_discovered(t.name, std::nullopt);
    any_unavailable = true;
    co_return;
  }
  HttpRequest probe;
  probe.method = "GET";
  probe.target = t.path;
  probe.headers = {{"X-Remote-User", "system:kube-aggregator"}, {"X-Remote-Group", "system:masters"}};
  const auto url = t.upstream->server + t.path;
  auto answered = forward(*t.upstream, std::move(probe), std::chrono::seconds(5));
  const HttpResponse r = co_await std::move(answered);
  if (r.status >= 200 && r.status < 300) {
    karmada->set_available(t.name, true, "Passed", "all checks passed");
    auto list = nlohmann::json::parse(r.body, nullptr, false);
    karmada->set_discovered(t.name, list.is_object() ? std::optional(std::move(list)) : std::nullopt);
    co_return;
  }
  karmada->set_discovered(t.name, std::nullopt);
  any_unavailable = true;
  std::string why = r.status == 503 && r.body.find("error trying to reach service") != std::string::npos
                        ? r.body
                        : "bad status from " + url + ": " + std::to_string(r.status);
  karmada->set_available(t.name, false, "FailedDiscoveryCheck", "failing or missing response from " + url + ": " + why);
}

async::Task<HttpResponse> Simulation::forward(Upstream up, HttpRequest request, std::chrono::seconds timeout) {
  kube::OutgoingRequest out;
  out.method = request.method;
  out.target = request.target;
  out.body = std::move(request.body);
  out.want_headers = true;
  for (auto& [name, value] : request.headers) {
    const std::string lower = k8s::ascii_lowercase(name);
    if (lower == "content-type") out.content_type = value;
    else if (lower != "connection" && lower != "accept-encoding" && lower != "transfer-encoding" && lower != "te")
      out.headers.emplace_back(name, value);
  }
  kube::HttpsClient* client = nullptr;
  std::string unreachable;
  try {
    client = &upstream(up);
  } catch (const std::exception& e) {
    unreachable = e.what();
  }
  if (client == nullptr) co_return detail_status(503, "error trying to reach service: " + unreachable);
  // kube-apiserver bounds a proxied request by its own request timeout (60 s).
  auto sent = client->request(std::move(out), std::chrono::steady_clock::now() + timeout);
  kube::HttpResult result = co_await std::move(sent);
  if (auto* e = std::get_if<k8s::Error>(&result))
    co_return detail_status(503, "error trying to reach service: " + e->message);
  auto& reply = std::get<kube::HttpReply>(result);
  HttpResponse response{
      reply.status, reply.content_type.empty() ? "application/json" : reply.content_type, std::move(reply.body), {}};
  for (auto& [name, value] : reply.headers) {
    const std::string lower = k8s::ascii_lowercase(name);
    if (lower != "content-type" && lower != "server" && lower != "cache-control" && lower != "date")
      response.headers.emplace_back(name, value);
  }
  co_return response;
}

HttpResponse Simulation::detail_status(int code, const std::string& message) {
  k8s::Status status = k8s::Status::service_unavailable(message);
  status.code = code;
  return HttpResponse{code, "application/json", status.to_json_string(), {}};
}

HttpResponse Simulation::handle_control(const HttpRequest& request) {
  std::lock_guard lock(write_mutex);
  auto current = state.load();
  auto outcome = handle_control_request(*current, request, wall_now());
  spdlog::info("control {} {} -> {}", request.method, request.target, outcome.response.status);
  if (outcome.updated) {
    auto next = std::make_shared<const Federation>(std::move(*outcome.updated));
    for (std::size_t i = 0; i < members.size(); ++i) {
      try {
        apply_listener_faults(i, current->members[i].faults, next->members[i].faults);
      } catch (const std::exception& e) {
        spdlog::error("member {}: {}", next->world.members[i].name, e.what());
      }
    }
    state.store(next);
    karmada->sync_replicas(*next);
    update_cluster_conditions(*next);
  }
  return outcome.response;
}

}  // namespace fedmetrics::sim::detail

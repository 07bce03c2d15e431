// The simulator's shell: certificates, listeners, timers and the control
// endpoint around the pure MemberApi and control handlers.
#include "fedmetrics/sim/sim_command.hpp"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/sim/control_api.hpp"
#include "fedmetrics/sim/karmada_api.hpp"
#include "fedmetrics/sim/federation.hpp"
#include "fedmetrics/sim/kubeconfig.hpp"
#include "fedmetrics/sim/member_api.hpp"
#include "fedmetrics/sim/member_hpa_controller.hpp"
#include "fedmetrics/sim/member_objects.hpp"
#include "fedmetrics/transport/certificate_authority.hpp"
#include "fedmetrics/transport/runtime.hpp"
#include "fedmetrics/transport/tls_server.hpp"

namespace fedmetrics::sim {

namespace {

namespace fs = std::filesystem;
using transport::HttpRequest;
using transport::HttpResponse;
using transport::TlsServer;

// How long a black hole holds a request whose client stays connected.
constexpr auto kBlackholeCap = std::chrono::minutes(10);

k8s::Timestamp wall_now() {
  return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
}

struct MemberCertificates {
  std::string cert_file, key_file;              // signed by the simulator's CA
  std::string wrong_cert_file, wrong_key_file;  // signed by another CA
};

// Everything the handlers share. The federation is an immutable snapshot
// swapped whole; writers (the control endpoint) serialise on `write_mutex`.
struct Simulation {
  std::atomic<std::shared_ptr<const Federation>> state;
  std::unique_ptr<KarmadaApi> karmada;
  std::unique_ptr<TlsServer> karmada_server;
  // The control plane's client side (cluster proxy, aggregation layer):
  // declared before the clients so that it outlives them.
  std::unique_ptr<kube::ClientRuntime> runtime;
  std::mutex upstreams_mutex;
  std::map<std::string, std::unique_ptr<kube::HttpsClient>> upstreams;
  std::string front_proxy_cert_pem, front_proxy_key_pem;
  // Some APIService failed its last check: re-check soon (the aggregator backs off from 5 ms to 30 s).
  std::atomic<bool> any_unavailable{false};
  std::mutex write_mutex;
  std::vector<std::unique_ptr<TlsServer>> members;
  // Each member's own stored objects (HorizontalPodAutoscalers).
  std::vector<std::unique_ptr<MemberObjects>> member_objects;
  // Each member's HPA controller; used on that member's listener thread only.
  std::vector<MemberHpaController> hpa_controllers;
  std::vector<MemberCertificates> certificates;
  std::vector<std::mt19937_64> rngs;  // per member, for the error-rate fault
  std::vector<std::unique_ptr<std::mutex>> rng_mutexes;

  double draw(std::size_t member) {
    std::lock_guard lock(*rng_mutexes[member]);
    return std::uniform_real_distribution<double>(0.0, 1.0)(rngs[member]);
  }

  // The faults a listener applies: refusal and the wrong certificate.
  void apply_listener_faults(std::size_t i, const Faults& before, const Faults& after) {
    if (before.refuse != after.refuse) members[i]->set_accepting(!after.refuse);
    if (before.wrong_certificate != after.wrong_certificate) {
      const auto& c = certificates[i];
      if (after.wrong_certificate) members[i]->set_certificate(c.wrong_cert_file, c.wrong_key_file);
      else members[i]->set_certificate(c.cert_file, c.key_file);
    }
  }

  void handle_member(std::size_t i, HttpRequest request, std::function<void(HttpResponse)> respond) {
    auto snapshot = state.load();
    const auto& faults = snapshot->members[i].faults;
    if (faults.blackhole) {
      // Never answers; the listener closes the connection when the client
      // goes, and this cap closes it otherwise.
      members[i]->schedule(kBlackholeCap, [respond] { respond(HttpResponse{0, {}, {}, {}}); });
      return;
    }
    auto delay = snapshot->world.members[i].latency + faults.latency;
    auto delayed = [this, i, delay, respond = std::move(respond)](HttpResponse response) {
      if (delay.count() > 0 && !response.stream) {
        members[i]->schedule(delay,
                             [respond, response = std::move(response)]() mutable { respond(std::move(response)); });
      } else {
        respond(std::move(response));
      }
    };
    if (MemberObjects::handles(request)) {
      auto name = snapshot->world.members[i].name, method = request.method, target = request.target;
      member_objects[i]->handle(
          *snapshot, i, request, draw(i),
          [this, i](std::chrono::nanoseconds d, std::function<void()> task) {
            members[i]->schedule(d, std::move(task));
          },
          [delayed, name, method, target](HttpResponse response) {
            spdlog::debug("{} {} {} -> {}", name, method, target, response.status);
            delayed(std::move(response));
          });
      return;
    }
    auto response = MemberApi(*snapshot, i).handle(request, wall_now(), draw(i));
    spdlog::debug("{} {} {} -> {}", snapshot->world.members[i].name, request.method, request.target, response.status);
    delayed(std::move(response));
  }

  // A member's HPA controller scaled its Deployment; a retaining template
  // follows the members' sum on the control plane (Karmada's replicas syncer).
  void set_member_replicas(std::size_t workload, std::size_t member, std::int32_t replicas, const std::string& reason) {
    std::lock_guard lock(write_mutex);
    auto current = state.load();
    auto next =
        std::make_shared<const Federation>(current->with_member_replicas(workload, member, replicas, wall_now()));
    state.store(next);
    if (next->workloads[workload].retain_replicas) karmada->sync_replicas(*next);
    spdlog::info("{}: horizontal-pod-autoscaler scaled {}/{} to {}: {}", current->world.members[member].name,
                 current->world.workloads[workload].namespace_name, current->world.workloads[workload].name, replicas,
                 reason);
  }

  // One resync of member i's HPAs: scale, then write each status.
  void resync_member_hpas(std::size_t i) {
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

  void schedule_member_hpa_resync(std::size_t i, std::chrono::nanoseconds period) {
    members[i]->schedule(period, [this, i, period] {
      resync_member_hpas(i);
      schedule_member_hpa_resync(i, period);
    });
  }

  // A load change from the world file's schedule (the control endpoint may have changed it meanwhile).
  void apply_scheduled_load(std::size_t workload, const Load& load) {
    std::lock_guard lock(write_mutex);
    auto current = state.load();
    state.store(std::make_shared<const Federation>(current->with_load(workload, load)));
    spdlog::info("load schedule: {}/{} now cpu {} and {} requests/s", current->world.workloads[workload].namespace_name,
                 current->world.workloads[workload].name, load.cpu.to_string(), load.requests_per_second.to_string());
  }

  void set_replicas(std::size_t workload, std::int32_t replicas) {
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

  void set_retain_replicas(std::size_t workload, bool retain) {
    std::lock_guard lock(write_mutex);
    auto current = state.load();
    if (current->workloads[workload].retain_replicas == retain) return;
    auto next = std::make_shared<const Federation>(current->with_retain_replicas(workload, retain));
    state.store(next);
    spdlog::info("karmada: {}/{} {} its members' replicas", current->world.workloads[workload].namespace_name,
                 current->world.workloads[workload].name, retain ? "retains" : "no longer retains");
    if (retain) karmada->sync_replicas(*next);
  }

  // The Ready condition Karmada's cluster status controller would report.
  void update_cluster_conditions(const Federation& f) {
    for (std::size_t i = 0; i < f.members.size(); ++i) {
      const auto& faults = f.members[i].faults;
      bool ready = !faults.refuse && !faults.blackhole && !faults.wrong_certificate;
      karmada->set_cluster_ready(
          f.world.members[i].name, ready,
          ready ? "cluster is healthy and ready to accept workloads" : "cluster is not reachable");
    }
  }

  kube::HttpsClient& upstream(const Upstream& up) {
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

  // kube-aggregator's availability check (remote_available_controller.go):
  // GET /apis/{group}/{version} as system:kube-aggregator (system:masters)
  // with the front-proxy certificate, 5 s; any 2xx makes it Available.
  void probe_apiservices() {
    for (auto& t : karmada->availability_targets()) {
      if (!t.upstream) {
        karmada->set_available(t.name, false, "ServiceNotFound", t.unreachable);
        karmada->set_discovered(t.name, std::nullopt);
        any_unavailable = true;
        continue;
      }
      HttpRequest probe;
      probe.method = "GET";
      probe.target = t.path;
      probe.headers = {{"X-Remote-User", "system:kube-aggregator"}, {"X-Remote-Group", "system:masters"}};
      auto url = t.upstream->server + t.path;
      forward(
          *t.upstream, std::move(probe),
          [this, name = t.name, url](HttpResponse r) {
            if (r.status >= 200 && r.status < 300) {
              karmada->set_available(name, true, "Passed", "all checks passed");
              auto list = nlohmann::json::parse(r.body, nullptr, false);
              karmada->set_discovered(name, list.is_object() ? std::optional(std::move(list)) : std::nullopt);
            } else {
              karmada->set_discovered(name, std::nullopt);
              any_unavailable = true;
              std::string why = r.status == 503 && r.body.find("error trying to reach service") != std::string::npos
                                    ? r.body
                                    : "bad status from " + url + ": " + std::to_string(r.status);
              karmada->set_available(name, false, "FailedDiscoveryCheck",
                                     "failing or missing response from " + url + ": " + why);
            }
          },
          std::chrono::seconds(5));
    }
  }

  // kube-aggregator's proxy: the request as it came (headers already
  // rewritten by KarmadaApi), the answer relayed with its headers (Warning).
  void forward(const Upstream& up, HttpRequest request, std::function<void(HttpResponse)> respond,
               std::chrono::seconds timeout = std::chrono::seconds(60)) {
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
    try {
      client = &upstream(up);
    } catch (const std::exception& e) {
      respond(detail_status(503, std::string("error trying to reach service: ") + e.what()));
      return;
    }
    // kube-apiserver bounds a proxied request by its own request timeout (60 s).
    client->send(std::move(out), std::chrono::steady_clock::now() + timeout,
                 [respond = std::move(respond), server = up.server](kube::HttpResult result) {
                   if (auto* e = std::get_if<k8s::Error>(&result)) {
                     respond(detail_status(503, "error trying to reach service: " + e->message));
                     return;
                   }
                   auto& reply = std::get<kube::HttpReply>(result);
                   HttpResponse response{reply.status,
                                         reply.content_type.empty() ? "application/json" : reply.content_type,
                                         std::move(reply.body),
                                         {}};
                   for (auto& [name, value] : reply.headers) {
                     const std::string lower = k8s::ascii_lowercase(name);
                     if (lower != "content-type" && lower != "server" && lower != "cache-control" && lower != "date")
                       response.headers.emplace_back(name, value);
                   }
                   respond(std::move(response));
                 });
  }

  static HttpResponse detail_status(int code, const std::string& message) {
    k8s::Status status = k8s::Status::service_unavailable(message);
    status.code = code;
    return HttpResponse{code, "application/json", status.to_json_string(), {}};
  }

  HttpResponse handle_control(const HttpRequest& request) {
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
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !(out << text)) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

CLI::App* add_sim_command(CLI::App& app, SimOptions& options) {
  auto* sim = app.add_subcommand(
      "sim",
      "Run a simulated Karmada federation's member clusters on 127.0.0.1: each serves the Kubernetes core\n"
      "pods/nodes APIs, metrics.k8s.io, custom.metrics.k8s.io and external.metrics.k8s.io as its world file\n"
      "declares, over TLS with bearer tokens, plus autoscaling/v2 HorizontalPodAutoscalers of its own that a\n"
      "member-local HPA controller acts on. Load and faults change at run time through the control endpoint\n"
      "(PUT /sim/v1/namespaces/{ns}/workloads/{name}/load, .../workloads/{name}/members/{member}/load,\n"
      "PUT /sim/v1/members/{name}/faults).");
  sim->add_option("--world", options.world_file,
                  "World file (YAML): members, nodes, namespaces, workloads and their propagation, load, users "
                  "and tokens, external metrics, faults (see examples/worlds/)")
      ->required()
      ->check(CLI::ExistingFile);
  sim->add_option("--out-dir", options.out_dir,
                  "Directory for ca.crt/ca.key (reused when present), member certificates and members.kubeconfig")
      ->capture_default_str();
  sim->add_option("--seed", options.seed, "Seed of the random draws behind the errorRate fault (reproducible runs)")
      ->capture_default_str();
  sim->add_option("--control-port", options.control_port,
                  "Port of the control endpoint on 127.0.0.1 (0 = any free port)")
      ->capture_default_str();
  sim->add_option("--karmada-port", options.karmada_port,
                  "Port of the simulated Karmada control plane (karmada-apiserver) on 127.0.0.1 (0 = any free port)")
      ->capture_default_str();
  sim->add_option("--watch-history", options.watch_history,
                  "How many control-plane changes are kept for watches that start from a resourceVersion; an older\n"
                  "one gets 410 Gone (Expired), as after an etcd compaction")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sim->add_option("--compress-min-bytes", options.compress_min_bytes,
                  "Members and the Karmada control plane gzip 200 answers of at least this many bytes when the\n"
                  "client sends Accept-Encoding: gzip, as kube-apiserver does over 128 KiB (0 = never compress)")
      ->capture_default_str();
  sim->add_option("--idle-timeout", options.idle_timeout,
                  "Members and the Karmada control plane close a kept-alive connection idle this long, as\n"
                  "kube-apiserver does after 90s (a Go duration: 90s, 1500ms); shorten it to test clients' reuse")
      ->capture_default_str();
  sim->add_option("--member-hpa-sync-period", options.member_hpa_sync_period,
                  "How often each member's own HPA controller resyncs the member's HorizontalPodAutoscalers on its\n"
                  "pods and pod metrics, as kube-controller-manager's --horizontal-pod-autoscaler-sync-period (a Go\n"
                  "duration; tests shorten it)")
      ->capture_default_str();
  sim->add_flag("-v,--verbose", options.verbosity,
                "Log more on stderr: -v logs every member request and connection errors");
  return sim;
}

int run_sim(const SimOptions& options) {
  auto started = std::chrono::steady_clock::now();
  // Every member listener has its own thread, and glibc gives threads their
  // own malloc arenas (up to 8 per core), each keeping the peak of the large
  // list answers built in it: 100 members x 1,000 pods held 460 MiB after one
  // list per member, 105 MiB with two arenas (bench/sim_scale.sh).
  mallopt(M_ARENA_MAX, 2);
  // Logs go to stderr: stdout carries only the lines scripts wait for.
  spdlog::set_default_logger(spdlog::stderr_color_mt("sim"));
  spdlog::set_level(options.verbosity >= 2   ? spdlog::level::trace
                    : options.verbosity == 1 ? spdlog::level::debug
                                             : spdlog::level::info);
  if (!fs::is_regular_file(options.world_file))
    throw std::runtime_error("--world " + options.world_file + ": not a readable file");
  auto parsed = parse_world(read_file(options.world_file));
  if (!parsed) throw std::runtime_error("--world " + options.world_file + ": " + parsed.error().message);
  World world = std::move(*parsed);
  auto idle_timeout = k8s::parse_duration(options.idle_timeout);
  if (!idle_timeout || idle_timeout->count() <= 0)
    throw std::runtime_error("--idle-timeout " + options.idle_timeout +
                             ": not a positive Go duration (such as 90s or 500ms)");
  const auto idle_ms = std::chrono::duration_cast<std::chrono::milliseconds>(*idle_timeout);
  auto hpa_sync_period = k8s::parse_duration(options.member_hpa_sync_period);
  if (!hpa_sync_period || hpa_sync_period->count() <= 0)
    throw std::runtime_error("--member-hpa-sync-period " + options.member_hpa_sync_period +
                             ": not a positive Go duration (such as 15s or 500ms)");

  fs::path out_dir = fs::absolute(options.out_dir);
  std::error_code ec;
  fs::create_directories(out_dir / "members", ec);
  if (ec) throw std::runtime_error("--out-dir " + out_dir.string() + ": " + ec.message());

  auto ca = transport::CertificateAuthority::load_or_create(out_dir.string(), "ca", "fedmetrics-sim-ca");
  // The "wrong certificate" fault: the same names, signed by a CA nobody trusts.
  auto rogue = transport::CertificateAuthority::create("fedmetrics-sim-rogue-ca");

  // The process's threads, signals and stop order (transport/runtime.hpp):
  // before any thread starts, and before what runs on it.
  transport::Runtime runtime(transport::RuntimeOptions{1, true});
  auto sim = std::make_shared<Simulation>();
  sim->state.store(std::make_shared<const Federation>(Federation::create(world, wall_now())));

  // The aggregation layer's identity: kubeadm's front-proxy CA and client pair.
  auto front_proxy_ca =
      transport::CertificateAuthority::load_or_create(out_dir.string(), "front-proxy-ca", "front-proxy-ca");
  auto front_proxy_cert = (out_dir / "front-proxy-client.crt").string();
  auto front_proxy_key = (out_dir / "front-proxy-client.key").string();
  front_proxy_ca.issue_client_certificate(front_proxy_cert, front_proxy_key, "front-proxy-client");
  sim->front_proxy_cert_pem = read_file(front_proxy_cert);
  sim->front_proxy_key_pem = read_file(front_proxy_key);
  sim->runtime = std::make_unique<kube::ClientRuntime>(runtime);
  for (std::size_t i = 0; i < world.members.size(); ++i) {
    const auto& m = world.members[i];
    MemberCertificates c;
    c.cert_file = (out_dir / "members" / (m.name + ".crt")).string();
    c.key_file = (out_dir / "members" / (m.name + ".key")).string();
    c.wrong_cert_file = (out_dir / "members" / (m.name + "-wrong.crt")).string();
    c.wrong_key_file = (out_dir / "members" / (m.name + "-wrong.key")).string();
    std::vector<std::string> dns{"localhost", m.name};
    std::vector<std::string> ips{"127.0.0.1"};
    ca.issue_serving_certificate(c.cert_file, c.key_file, m.name, dns, ips);
    rogue.issue_serving_certificate(c.wrong_cert_file, c.wrong_key_file, m.name, dns, ips);
    sim->certificates.push_back(std::move(c));
    sim->member_objects.push_back(std::make_unique<MemberObjects>(wall_now, options.watch_history));
    sim->hpa_controllers.emplace_back();
    sim->rngs.emplace_back(options.seed + i);
    sim->rng_mutexes.push_back(std::make_unique<std::mutex>());
  }

  for (std::size_t i = 0; i < world.members.size(); ++i) {
    transport::TlsServerOptions o;
    o.bind_address = "127.0.0.1";
    o.port = world.members[i].port;
    o.cert_file = sim->certificates[i].cert_file;
    o.key_file = sim->certificates[i].key_file;
    o.threads = 1;
    o.abandon_when_client_closes = true;
    o.compress_min_bytes = options.compress_min_bytes;
    o.idle_timeout = idle_ms;
    try {
      sim->members.push_back(std::make_unique<TlsServer>(
          o,
          transport::from_callback([s = sim.get(), i](HttpRequest request, std::function<void(HttpResponse)> respond) {
            s->handle_member(i, std::move(request), std::move(respond));
          })));
    } catch (const std::exception& e) {
      throw std::runtime_error("member " + world.members[i].name + ": " + e.what());
    }
  }
  transport::TlsServerOptions control_options;
  control_options.bind_address = "127.0.0.1";
  control_options.port = options.control_port;
  control_options.cert_file = sim->certificates.front().cert_file;
  control_options.key_file = sim->certificates.front().key_file;
  control_options.threads = 1;
  TlsServer control(
      control_options,
      transport::from_callback([s = sim.get()](HttpRequest request, std::function<void(HttpResponse)> respond) {
        respond(s->handle_control(request));
      }));

  // The Karmada control plane.
  auto karmada_cert = (out_dir / "karmada-apiserver.crt").string();
  auto karmada_key = (out_dir / "karmada-apiserver.key").string();
  ca.issue_serving_certificate(karmada_cert, karmada_key, "karmada-apiserver",
                               {"localhost", "karmada-apiserver", "kubernetes.default.svc"}, {"127.0.0.1"});
  transport::TlsServerOptions karmada_options;
  karmada_options.bind_address = "127.0.0.1";
  karmada_options.port = options.karmada_port;
  karmada_options.cert_file = karmada_cert;
  karmada_options.key_file = karmada_key;
  karmada_options.threads = 1;
  karmada_options.compress_min_bytes = options.compress_min_bytes;
  karmada_options.idle_timeout = idle_ms;
  sim->karmada_server = std::make_unique<TlsServer>(
      karmada_options,
      transport::from_callback([s = sim.get()](HttpRequest request, std::function<void(HttpResponse)> respond) {
        auto method = request.method, target = request.target;
        s->karmada->handle(std::move(request), [respond = std::move(respond), method, target](HttpResponse r) {
          spdlog::debug("karmada {} {} -> {}", method, target, r.status);
          respond(std::move(r));
        });
      }));
  KarmadaHooks hooks;
  hooks.clock = wall_now;
  hooks.federation = [s = sim.get()] { return s->state.load(); };
  hooks.set_replicas = [s = sim.get()](std::size_t w, std::int32_t n) { s->set_replicas(w, n); };
  hooks.set_retain_replicas = [s = sim.get()](std::size_t w, bool retain) { s->set_retain_replicas(w, retain); };
  hooks.forward = [s = sim.get()](const Upstream& up, HttpRequest request, std::function<void(HttpResponse)> respond) {
    s->forward(up, std::move(request), std::move(respond));
  };
  hooks.schedule = [s = sim.get()](std::chrono::nanoseconds delay, std::function<void()> task) {
    s->karmada_server->schedule(delay, std::move(task));
  };
  sim->karmada =
      std::make_unique<KarmadaApi>(std::make_shared<ObjectStore>(wall_now, options.watch_history), std::move(hooks));

  for (std::size_t i = 0; i < world.members.size(); ++i)
    sim->schedule_member_hpa_resync(i, std::chrono::duration_cast<std::chrono::nanoseconds>(*hpa_sync_period));

  // The world file's load schedules, timed from now.
  for (std::size_t w = 0; w < world.workloads.size(); ++w)
    for (const auto& change : world.workloads[w].load_schedule)
      control.schedule(change.at, [s = sim.get(), w, load = change.load] { s->apply_scheduled_load(w, load); });

  // Faults declared in the world file that the listeners apply.
  for (std::size_t i = 0; i < world.members.size(); ++i)
    sim->apply_listener_faults(i, Faults{}, world.members[i].faults);

  std::vector<std::uint16_t> ports;
  for (const auto& s : sim->members) ports.push_back(s->port());
  auto endpoints = member_endpoints(world, ports);
  write_file(out_dir / "members.kubeconfig", members_kubeconfig(endpoints, ca.certificate_file()));
  std::vector<ClusterRegistration> registrations;
  for (const auto& e : endpoints) registrations.push_back({e.name, e.server, e.token, ca.certificate_pem()});
  AuthenticationTrust trust;
  trust.client_ca_pem = ca.certificate_pem();
  trust.requestheader_client_ca_pem = front_proxy_ca.certificate_pem();
  std::string aggregation_ca;
  if (world.aggregation && !world.aggregation->ca_file.empty()) {
    auto ca_path = fs::path(world.aggregation->ca_file);
    if (ca_path.is_relative()) ca_path = fs::absolute(options.world_file).parent_path() / ca_path;
    aggregation_ca = read_file(ca_path.string());
  }
  sim->karmada->seed(*sim->state.load(), registrations, trust, aggregation_ca);
  sim->update_cluster_conditions(*sim->state.load());
  // Availability: checked at once when an APIService or Service changes, and every 30 s.
  auto& store = sim->karmada->store();
  for (auto* type :
       {store.find_type("apiregistration.k8s.io", "v1", "apiservices"), store.find_type("", "v1", "services")})
    store.watch(*type, "", {}, {}, "", [s = sim.get()](const WatchEvent&) {
      s->karmada_server->schedule(std::chrono::nanoseconds(0), [s] { s->probe_apiservices(); });
      return true;
    });
  // Every second: re-check when the last check of some APIService failed,
  // and everything every 30 s (the aggregator's resync).
  auto last_full_probe = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  std::function<void()> periodic_probe = [s = sim.get(), last_full_probe, &periodic_probe] {
    auto now = std::chrono::steady_clock::now();
    if (s->any_unavailable.exchange(false) || now - *last_full_probe >= std::chrono::seconds(30)) {
      *last_full_probe = now;
      s->probe_apiservices();
    }
    s->karmada_server->schedule(std::chrono::seconds(1), [&periodic_probe] { periodic_probe(); });
  };
  sim->karmada_server->schedule(std::chrono::seconds(1), [&periodic_probe] { periodic_probe(); });
  MemberEndpoint karmada_endpoint{"karmada-apiserver",
                                  "https://127.0.0.1:" + std::to_string(sim->karmada_server->port()),
                                  world.users.front().token};
  write_file(out_dir / "karmada.kubeconfig", members_kubeconfig({karmada_endpoint}, ca.certificate_file()));

  // Each listener on threads of its own; SIGINT or SIGTERM stops them all.
  for (auto* server : {&control, sim->karmada_server.get()})
    runtime.start(
        transport::Stage::server, "listener", [server] { server->start(); },
        [server] {
          server->stop();
          server->join();
        });
  for (auto& s : sim->members)
    runtime.start(
        transport::Stage::server, "member listener", [server = s.get()] { server->start(); },
        [server = s.get()] {
          server->stop();
          server->join();
        });

  for (std::size_t i = 0; i < world.members.size(); ++i)
    std::cout << "member " << world.members[i].name << " serving on https://127.0.0.1:" << ports[i] << "\n";
  std::cout << "karmada serving on " << karmada_endpoint.server << "\n";
  std::cout << "control serving on https://127.0.0.1:" << control.port() << "\n";
  std::cout << "kubeconfig " << (out_dir / "members.kubeconfig").string() << "\n";
  std::cout << "karmada kubeconfig " << (out_dir / "karmada.kubeconfig").string() << "\n";
  std::cout << "world ready" << std::endl;
  spdlog::info(
      "world ready in {} ms",
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count());

  runtime.wait();  // until SIGINT or SIGTERM
  runtime.stop();
  return 0;
}

}  // namespace fedmetrics::sim

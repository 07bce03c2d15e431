// The simulator's shell: its flags, and the start-up that reads the world,
// issues the certificates, opens the listeners around the running
// simulation (simulation.cpp) and writes the kubeconfigs.
#include <utility>  // before Asio's awaitable.hpp (GCC 12 coroutines)

#include "fedmetrics/sim/sim_command.hpp"

#include <malloc.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/sim/kubeconfig.hpp"
#include "fedmetrics/transport/async.hpp"
#include "fedmetrics/transport/certificate_authority.hpp"
#include "fedmetrics/transport/runtime.hpp"
#include "fedmetrics/transport/tls_server.hpp"
#include "sim/simulation.hpp"

namespace fedmetrics::sim {

namespace {

namespace fs = std::filesystem;
using detail::MemberCertificates;
using detail::Simulation;
using detail::wall_now;
using transport::HttpRequest;
using transport::HttpResponse;
using transport::TlsServer;

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

// The simulation's runtime, all of it: the client runtime of the aggregation
// layer's proxy and checks, and every listener (each member's, the Karmada
// control plane's, the control endpoint's) as a server-stage component of the
// process runtime, until SIGINT/SIGTERM stops them. `ready` runs once they all run.
// Every request, timer and watch of the simulation runs on these threads.
void run_until_stopped(transport::Runtime& runtime, Simulation& sim, TlsServer& control,
                       const std::function<void()>& ready) {
  // Each listener on threads of its own; SIGINT or SIGTERM stops them all.
  for (auto* server : {&control, sim.karmada_server.get()})
    runtime.start(
        transport::Stage::server, "listener", [server] { server->start(); },
        [server] {
          server->stop();
          server->join();
        });
  for (auto& s : sim.members)
    runtime.start(
        transport::Stage::server, "member listener", [server = s.get()] { server->start(); },
        [server = s.get()] {
          server->stop();
          server->join();
        });
  // The APIServices' availability checks, on the client runtime's threads.
  runtime.start(
      transport::Stage::loops, "apiservice probes",
      [&sim] {
        sim.probe_job.start(*sim.probe_strand, "karmada: the APIServices' availability checks",
                            [s = &sim] { return s->probe_apiservices_loop(); });
      },
      [&sim] { sim.probe_job.stop(); });
  ready();
  runtime.wait();  // until SIGINT or SIGTERM
  runtime.stop();
}

// The listeners' handlers (named coroutines: a capturing lambda never is one).
async::Task<HttpResponse> serve_control(Simulation* sim, HttpRequest request) {
  co_return sim->handle_control(request);
}

async::Task<HttpResponse> serve_karmada(Simulation* sim, HttpRequest request) {
  const std::string method = request.method, target = request.target;
  auto handled = sim->karmada->handle(std::move(request));
  HttpResponse response = co_await std::move(handled);
  spdlog::debug("karmada {} {} -> {}", method, target, response.status);
  co_return response;
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
  // The control plane's client side (cluster proxy, aggregation layer and its checks).
  sim->runtime = std::make_unique<kube::ClientRuntime>(runtime);
  sim->probe_strand = async::make_strand(sim->runtime->executor());
  sim->probe_wakeup = std::make_unique<async::Wakeup>(*sim->probe_strand);
  sim->state.store(std::make_shared<const Federation>(Federation::create(world, wall_now())));

  // The aggregation layer's identity: kubeadm's front-proxy CA and client pair.
  auto front_proxy_ca =
      transport::CertificateAuthority::load_or_create(out_dir.string(), "front-proxy-ca", "front-proxy-ca");
  auto front_proxy_cert = (out_dir / "front-proxy-client.crt").string();
  auto front_proxy_key = (out_dir / "front-proxy-client.key").string();
  front_proxy_ca.issue_client_certificate(front_proxy_cert, front_proxy_key, "front-proxy-client");
  sim->front_proxy_cert_pem = read_file(front_proxy_cert);
  sim->front_proxy_key_pem = read_file(front_proxy_key);
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
    sim->pod_counters.push_back(std::make_unique<detail::PodCounters>());
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
          o, [s = sim.get(), i](HttpRequest request) { return s->handle_member(i, std::move(request)); }));
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
  TlsServer control(control_options,
                    [s = sim.get()](HttpRequest request) { return serve_control(s, std::move(request)); });

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
      karmada_options, [s = sim.get()](HttpRequest request) { return serve_karmada(s, std::move(request)); });
  KarmadaHooks hooks;
  hooks.clock = wall_now;
  hooks.federation = [s = sim.get()] { return s->state.load(); };
  hooks.set_replicas = [s = sim.get()](std::size_t w, std::int32_t n) { s->set_replicas(w, n); };
  hooks.set_retain_replicas = [s = sim.get()](std::size_t w, bool retain) { s->set_retain_replicas(w, retain); };
  hooks.forward = [s = sim.get()](Upstream up, HttpRequest request) {
    return s->forward(std::move(up), std::move(request));
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
  // Availability: checked at once when an APIService or Service changes
  // (Simulation::probe_apiservices_loop checks again every second what failed, and all every 30 s).
  auto& store = sim->karmada->store();
  for (auto* type :
       {store.find_type("apiregistration.k8s.io", "v1", "apiservices"), store.find_type("", "v1", "services")})
    store.watch(*type, "", {}, {}, "", [s = sim.get()](const WatchEvent&) {
      s->request_probe();
      return true;
    });
  MemberEndpoint karmada_endpoint{"karmada-apiserver",
                                  "https://127.0.0.1:" + std::to_string(sim->karmada_server->port()),
                                  world.users.front().token};
  write_file(out_dir / "karmada.kubeconfig", members_kubeconfig({karmada_endpoint}, ca.certificate_file()));

  run_until_stopped(runtime, *sim, control, [&] {
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
  });
  return 0;
}

}  // namespace fedmetrics::sim

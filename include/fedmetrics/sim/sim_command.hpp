#pragma once
// `fedmetrics sim --world WORLD.yaml`: a simulated Karmada federation's member
// clusters in one process on 127.0.0.1, each with its own port, TLS
// certificate (signed by the simulator's CA) and bearer-token authentication,
// plus a simulated Karmada control plane (karmada_api.hpp) and a control
// endpoint for load and faults. Writes <out-dir>/ca.crt,
// <out-dir>/members.kubeconfig, <out-dir>/karmada.kubeconfig and the
// front-proxy pair; prints one "member NAME serving on URL" line per member,
// "karmada serving on URL", "control serving on URL", the kubeconfig paths,
// then "world ready".
#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace fedmetrics::sim {

struct SimOptions {
  std::string world_file;
  std::string out_dir = "sim-out";
  std::uint64_t seed = 1;
  std::uint16_t control_port = 0;      // 0 = any free port
  std::uint16_t karmada_port = 0;      // the simulated Karmada control plane; 0 = any free port
  std::size_t watch_history = 10'000;  // control-plane changes kept for watches from a resourceVersion
  // Members and the control plane gzip answers of at least this many bytes
  // to clients that accept gzip; 0 = never. 128 KiB: kube-apiserver's threshold.
  std::size_t compress_min_bytes = 128 * 1024;
  // Members and the control plane close a kept-alive connection idle this
  // long, as kube-apiserver does after 90 s (Go's http.Server IdleTimeout).
  // Tests shorten it to meet a closed idle connection in seconds (a Go duration).
  std::string idle_timeout = "90s";
  // How often each member's HPA controller resyncs its HorizontalPodAutoscalers
  // (kube-controller-manager's --horizontal-pod-autoscaler-sync-period, 15s; a Go duration).
  std::string member_hpa_sync_period = "15s";
  int verbosity = 0;
};

CLI::App* add_sim_command(CLI::App& app, SimOptions& options);
// Blocks until SIGINT/SIGTERM; returns the exit code. Throws std::runtime_error
// on start-up failures (bad world file, port in use, unwritable --out-dir).
int run_sim(const SimOptions& options);

}  // namespace fedmetrics::sim

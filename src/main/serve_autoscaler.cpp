// The autoscaler's assembly: the FederatedHPA and CronFederatedHPA loops on
// the control plane of --kubeconfig, the leader election, distributed mode's
// member HPA clients and the loops' metrics, from the flags.
#include <unistd.h>

#include <array>
#include <cstdio>
#include <random>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "fedmetrics/aggregator/aggregator.hpp"
#include "fedmetrics/clusterclient/member_client_cache.hpp"
#include "fedmetrics/clusterclient/member_set.hpp"
#include "fedmetrics/cron/schedule.hpp"
#include "fedmetrics/telemetry/autoscaler_metrics.hpp"
#include "fedmetrics/telemetry/prometheus_server_metrics.hpp"
#include "fedmetrics/kubeclient/rest_control_plane.hpp"
#include "fedmetrics/kubeclient/rest_member_hpas.hpp"
#include "fedmetrics/kubeclient/watched_member_pods.hpp"
#include "main/serve_wiring.hpp"

namespace fedmetrics::cli {

void Autoscaler::start() {
  if (elector) elector->start();
  loop->start();
  cron->start();
}

void Autoscaler::stop() {
  if (cron) cron->stop();
  if (loop) loop->stop();
  if (pods) pods->stop();        // after the loop: no sync reads them any more
  if (elector) elector->stop();  // releases the Lease
}

namespace {

std::string election_identity() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) std::snprintf(host.data(), host.size(), "fedmetrics");
  std::random_device random;
  return std::string(host.data()) + "_" + std::to_string(random()) + std::to_string(random());
}

// Distributed mode's member HPA clients, one per member, reaching it as
// the metrics reads do (the endpoint the member source planned for it),
// made when first needed and again when that endpoint changes (a rotated
// token). One that no sync or sweep asked for in 10 minutes is dropped
// (its member left the member set: every Ready member is asked at least
// once a sweep), so that member churn does not keep clients forever.
controller::MemberHPAsFactory member_hpas_factory(kube::ClientRuntime& runtime,
                                                  std::shared_ptr<clusterclient::RefreshingMemberSource> members,
                                                  std::chrono::milliseconds timeout) {
  using Cache = clusterclient::MemberClientCache<controller::MemberHPAs>;
  auto cache = std::make_shared<Cache>(
      [&runtime, timeout](const kube::ClusterEndpoint& endpoint) {
        return kubeclient::make_member_hpas(runtime, endpoint, timeout);
      },
      std::chrono::minutes(10));
  return [cache, members = std::move(members)](
             const aggregator::MemberCluster& member) -> std::shared_ptr<controller::MemberHPAs> {
    auto endpoint = members->member_set().endpoint_of(member.name());
    if (!endpoint) return nullptr;  // left the member set since the loop's snapshot
    try {
      return cache->get(*endpoint, std::chrono::steady_clock::now());
    } catch (const std::exception& e) {
      spdlog::warn("autoscaler: member {}: its HPAs cannot be written: {}", member.name(), e.what());
      return nullptr;
    }
  };
}

// The members' pods the loop reads, one watch per member and namespace in
// use, each on a client of its own that reaches the member as the metrics
// reads do (the endpoint the member source planned for it; a new one when
// that endpoint changes before a watch starts).
std::shared_ptr<kubeclient::WatchedMemberPods> watched_member_pods(
    kube::ClientRuntime& runtime, std::shared_ptr<clusterclient::RefreshingMemberSource> members,
    std::chrono::milliseconds timeout) {
  using Cache = clusterclient::MemberClientCache<kube::ListWatch>;
  auto cache = std::make_shared<Cache>(
      [&runtime](const kube::ClusterEndpoint& endpoint) {
        kube::ClientOptions options;
        options.peer_name = endpoint.name;
        return kube::list_watch(std::make_shared<kube::HttpsClient>(runtime, endpoint, options));
      },
      std::chrono::minutes(10));
  auto connect = [cache, members = std::move(members)](const std::string& member) -> std::shared_ptr<kube::ListWatch> {
    auto endpoint = members->member_set().endpoint_of(member);
    if (!endpoint) return nullptr;  // left the member set since the loop's snapshot
    try {
      return cache->get(*endpoint, std::chrono::steady_clock::now());
    } catch (const std::exception& e) {
      spdlog::warn("autoscaler: member {}: its pods cannot be watched: {}", member, e.what());
      return nullptr;
    }
  };
  kubeclient::WatchedMemberPodsOptions options;
  options.first_list_timeout = timeout;
  return std::make_shared<kubeclient::WatchedMemberPods>(runtime.executor(), std::move(connect), options);
}

}  // namespace

std::unique_ptr<Autoscaler> make_autoscaler(const ServeOptions& o, kube::ClientRuntime& runtime,
                                            std::shared_ptr<aggregator::Aggregator> metrics,
                                            std::shared_ptr<clusterclient::RefreshingMemberSource> members,
                                            std::shared_ptr<aggregator::MemberSource> member_view,
                                            std::chrono::milliseconds member_timeout,
                                            telemetry::PrometheusServerMetrics& self_metrics) {
  if (!o.enable_autoscaler) return nullptr;
  if (o.kubeconfig.empty())
    throw std::runtime_error(
        "--enable-autoscaler needs --kubeconfig, the Karmada control plane whose FederatedHPAs "
        "it manages");
  if (!metrics)
    throw std::runtime_error(
        "--enable-autoscaler needs member clusters: give --member-kubeconfig or "
        "--karmada-kubeconfig");
  controller::ControllerOptions options;
  options.sync_period = duration_flag("--horizontal-pod-autoscaler-sync-period", o.hpa_sync_period);
  if (options.sync_period.count() == 0)
    throw std::runtime_error("--horizontal-pod-autoscaler-sync-period: must be more than 0s");
  options.concurrent_syncs = o.concurrent_hpa_syncs;
  options.member_timeout = member_timeout;
  if (!o.autoscaler_label_selector.empty()) {
    auto selector = k8s::LabelSelector::parse(o.autoscaler_label_selector);
    if (!selector) throw std::runtime_error("--autoscaler-label-selector: " + selector.error().message);
    options.selector = std::move(*selector);
  }
  options.algorithm.tolerance = o.hpa_tolerance;
  options.algorithm.calculator.cpu_initialization_period =
      duration_flag("--horizontal-pod-autoscaler-cpu-initialization-period", o.hpa_cpu_initialization_period);
  options.algorithm.calculator.initial_readiness_delay =
      duration_flag("--horizontal-pod-autoscaler-initial-readiness-delay", o.hpa_initial_readiness_delay);
  options.algorithm.downscale_stabilization =
      duration_flag("--horizontal-pod-autoscaler-downscale-stabilization", o.hpa_downscale_stabilization);
  options.rebalance_window = duration_flag("--distributed-rebalance-window", o.distributed_rebalance_window);
  options.orphan_sweep_period = duration_flag("--distributed-orphan-sweep-period", o.distributed_orphan_sweep_period);
  options.member_hpas = member_hpas_factory(runtime, members, member_timeout);
  options.monitor = std::make_shared<telemetry::PrometheusAutoscalerMetrics>(*self_metrics.registry());
  auto control_plane = std::make_shared<kubeclient::RestControlPlane>(runtime, o.kubeconfig, std::chrono::seconds(10));
  auto out = std::make_unique<Autoscaler>();
  out->pods = watched_member_pods(runtime, members, member_timeout);
  options.member_pods = out->pods;
  if (o.leader_elect) {
    controller::ElectionOptions election;
    election.namespace_name = o.leader_elect_resource_namespace;
    election.name = o.leader_elect_resource_name;
    election.identity = election_identity();
    election.lease_duration = duration_flag("--leader-elect-lease-duration", o.leader_elect_lease_duration);
    election.renew_deadline = duration_flag("--leader-elect-renew-deadline", o.leader_elect_renew_deadline);
    election.retry_period = duration_flag("--leader-elect-retry-period", o.leader_elect_retry_period);
    // The new leader's first pass at once, not up to a sync period later
    // (also after a failover). The loop outlives the elector's thread.
    election.on_started_leading = [autoscaler = out.get()] {
      if (autoscaler->loop) autoscaler->loop->sync_soon();
      if (autoscaler->cron) autoscaler->cron->sync_soon();  // a run missed during the failover, at once
    };
    // Losing the Lease cancels the syncs in flight before their next write.
    election.on_stopped_leading = [autoscaler = out.get()] {
      if (autoscaler->loop) autoscaler->loop->cancel_in_flight();
      if (autoscaler->cron) autoscaler->cron->cancel_in_flight();
    };
    if (election.lease_duration <= election.renew_deadline || election.renew_deadline <= election.retry_period ||
        election.retry_period.count() == 0)
      throw std::runtime_error(
          "--leader-elect-*: need lease duration > renew deadline > retry period > 0 (as client-go)");
    spdlog::info("autoscaler: leader election on Lease {}/{} as {}", election.namespace_name, election.name,
                 election.identity);
    out->elector = std::make_shared<controller::LeaderElector>(
        runtime.executor(), std::make_shared<kubeclient::RestLeaseClient>(control_plane), election);
    options.active = [elector = out->elector.get()] { return elector->leading(); };
    self_metrics.add_collectable(std::make_shared<telemetry::LeaderElectionMetrics>(
        election.name, [weak = std::weak_ptr<controller::LeaderElector>(out->elector)] {
          auto elector = weak.lock();
          return elector && elector->leading();
        }));
  }
  spdlog::info("autoscaler: managing FederatedHPAs{} every {}",
               options.selector.empty() ? "" : " matching " + options.selector.to_string(), o.hpa_sync_period);
  controller::CronControllerOptions cron;
  cron.selector = options.selector;
  cron.resync_period = options.sync_period;
  cron.default_time_zone = o.cron_default_time_zone;
  if (auto zone = cron::Schedule::parse("@daily", cron.default_time_zone); !zone)
    throw std::runtime_error("--cron-default-time-zone: " + zone.error().message);
  cron.missed_run_deadline = duration_flag("--cron-missed-run-deadline", o.cron_missed_run_deadline);
  cron.active = options.active;
  out->cron = std::make_shared<controller::CronController>(
      runtime.executor(), kubeclient::RestControlPlane::ports(control_plane), std::move(cron));
  out->loop = std::make_unique<controller::HpaController>(
      runtime.executor(), kubeclient::RestControlPlane::ports(control_plane), std::move(metrics),
      std::move(member_view), std::move(options));
  return out;
}

}  // namespace fedmetrics::cli

#include "fedmetrics/telemetry/member_client_metrics.hpp"

#include <limits>

#include <prometheus/metric_family.h>

#include "fedmetrics/clusterclient/member_set.hpp"

namespace fedmetrics::telemetry {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

ClientMetric labelled(std::vector<ClientMetric::Label> labels) {
  ClientMetric m;
  m.label = std::move(labels);
  return m;
}

}  // namespace

std::vector<MetricFamily> MemberClientMetrics::Collect() const {
  MetricFamily requests{"fedmetrics_member_client_requests_total",
                        "Requests to member clusters by outcome (success or the error class).",
                        MetricType::Counter,
                        {}};
  MetricFamily latency{"fedmetrics_member_client_request_duration_seconds",
                       "Time from a request to a member cluster to its answer or failure.",
                       MetricType::Histogram,
                       {}};
  MetricFamily in_flight{
      "fedmetrics_member_client_in_flight", "Requests to a member cluster not answered yet.", MetricType::Gauge, {}};
  MetricFamily connections{
      "fedmetrics_member_client_connections", "Connections to a member cluster, open and idle.", MetricType::Gauge, {}};
  MetricFamily handshakes{"fedmetrics_member_client_tls_handshakes_total",
                          "TLS handshakes with a member cluster (new connections).",
                          MetricType::Counter,
                          {}};
  MetricFamily retries{"fedmetrics_member_client_retries_total",
                       "Requests sent again on a new connection after a reused one turned out closed before the "
                       "answer began (only replayable requests).",
                       MetricType::Counter,
                       {}};
  MetricFamily idle_closed{"fedmetrics_member_client_idle_connections_closed_total",
                           "Idle connections closed by the client: idle too long, or found closed by the member "
                           "before reuse.",
                           MetricType::Counter,
                           {}};
  MetricFamily last_success{"fedmetrics_member_client_last_success_timestamp_seconds",
                            "Unix time of the last successful answer from a member cluster.",
                            MetricType::Gauge,
                            {}};
  MetricFamily healthy{"fedmetrics_member_healthy",
                       "1 when the member's API server answered its last health probe (/readyz) with ok, else 0; "
                       "absent before the first probe.",
                       MetricType::Gauge,
                       {}};

  MetricFamily left_out{"fedmetrics_member_left_out",
                        "1 for each member cluster the source knows but does not ask (a Karmada Cluster not Ready, an "
                        "endpoint that cannot be used, a member that does not answer); every answer that misses it "
                        "warns.",
                        MetricType::Gauge,
                        {}};

  const auto snapshot = view_ ? view_->snapshot() : members_->snapshot();
  for (const auto& m : snapshot->left_out) {
    auto g = labelled({{"cluster", m.name}});
    g.gauge.value = 1;
    left_out.metric.push_back(std::move(g));
  }
  for (const auto& rest : members_->member_set().clients()) {
    const std::string& cluster = rest->name();
    auto s = rest->stats();
    for (const auto& [outcome, count] : s.outcomes) {
      auto m = labelled({{"cluster", cluster}, {"outcome", outcome}});
      m.counter.value = static_cast<double>(count);
      requests.metric.push_back(std::move(m));
    }
    auto h = labelled({{"cluster", cluster}});
    h.histogram.sample_count = s.latency_count;
    h.histogram.sample_sum = s.latency_sum_seconds;
    for (std::size_t i = 0; i < kube::kLatencyBuckets.size(); ++i)
      h.histogram.bucket.push_back({s.latency_le[i], kube::kLatencyBuckets[i]});
    h.histogram.bucket.push_back({s.latency_count, std::numeric_limits<double>::infinity()});
    latency.metric.push_back(std::move(h));
    auto f = labelled({{"cluster", cluster}});
    f.gauge.value = static_cast<double>(s.in_flight);
    in_flight.metric.push_back(std::move(f));
    for (auto [state, value] : {std::pair{"open", s.open_connections}, std::pair{"idle", s.idle_connections}}) {
      auto c = labelled({{"cluster", cluster}, {"state", state}});
      c.gauge.value = static_cast<double>(value);
      connections.metric.push_back(std::move(c));
    }
    auto t = labelled({{"cluster", cluster}});
    t.counter.value = static_cast<double>(s.tls_handshakes);
    handshakes.metric.push_back(std::move(t));
    auto r = labelled({{"cluster", cluster}});
    r.counter.value = static_cast<double>(s.retries);
    retries.metric.push_back(std::move(r));
    auto ic = labelled({{"cluster", cluster}});
    ic.counter.value = static_cast<double>(s.idle_closed);
    idle_closed.metric.push_back(std::move(ic));
    if (s.last_success) {
      auto l = labelled({{"cluster", cluster}});
      l.gauge.value = std::chrono::duration<double>(s.last_success->time_since_epoch()).count();
      last_success.metric.push_back(std::move(l));
    }
    if (auto health = rest->last_health()) {
      auto g = labelled({{"cluster", cluster}});
      g.gauge.value = health->healthy ? 1 : 0;
      healthy.metric.push_back(std::move(g));
    }
  }
  return {requests, latency, in_flight, connections, handshakes, retries, idle_closed, last_success, healthy, left_out};
}

}  // namespace fedmetrics::telemetry

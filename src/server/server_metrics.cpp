#include "server/server_metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace fedmetrics::server {

struct ServerMetrics::Families {
  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Family<prometheus::Histogram>& latency;
  prometheus::Gauge& in_flight;
};

namespace {
// Seconds; up to 60 s, because a member deadline can be set that long.
const prometheus::Histogram::BucketBoundaries kLatencyBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                                0.25,  0.5,    1,     2.5,  5,     10,   30, 60};
}  // namespace

ServerMetrics::ServerMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  auto& requests = prometheus::BuildCounter()
                       .Name("fedmetrics_apiserver_requests_total")
                       .Help("Requests answered, by API group, resource and HTTP code.")
                       .Register(*registry_);
  auto& latency = prometheus::BuildHistogram()
                      .Name("fedmetrics_apiserver_request_duration_seconds")
                      .Help("Time from request to response, by API group and resource.")
                      .Register(*registry_);
  auto& in_flight = prometheus::BuildGauge()
                        .Name("fedmetrics_apiserver_requests_in_flight")
                        .Help("Requests being answered now.")
                        .Register(*registry_)
                        .Add({});
  families_ = std::make_unique<Families>(Families{requests, latency, in_flight});
}

ServerMetrics::~ServerMetrics() = default;

void ServerMetrics::observe_request(std::string_view group, std::string_view resource, int code, double seconds) {
  families_->requests
      .Add({{"group", std::string(group)}, {"resource", std::string(resource)}, {"code", std::to_string(code)}})
      .Increment();
  families_->latency.Add({{"group", std::string(group)}, {"resource", std::string(resource)}}, kLatencyBuckets)
      .Observe(seconds);
}

void ServerMetrics::request_started() { families_->in_flight.Increment(); }
void ServerMetrics::request_finished() { families_->in_flight.Decrement(); }

std::shared_ptr<prometheus::Registry> ServerMetrics::registry() const { return registry_; }

void ServerMetrics::add_collectable(std::shared_ptr<prometheus::Collectable> collectable) {
  collectables_.push_back(std::move(collectable));
}

std::string ServerMetrics::serialize() const {
  auto families = registry_->Collect();
  for (const auto& c : collectables_) {
    auto more = c->Collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace fedmetrics::server

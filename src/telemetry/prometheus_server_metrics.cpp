#include "fedmetrics/telemetry/prometheus_server_metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <map>
#include <mutex>

namespace fedmetrics::telemetry {

struct PrometheusServerMetrics::Families {
  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Family<prometheus::Histogram>& latency;
  prometheus::Gauge& in_flight;
  prometheus::Counter& token_review_failures;
  prometheus::Counter& access_review_failures;
  // The series of each (group, resource, code) seen, found again by one map
  // lookup: prometheus-cpp's Family::Add builds the label map, hashes it and
  // constructs a new metric (a histogram's buckets too) on every call, only
  // to throw it away when the series exists, which cost every request.
  struct Series {
    prometheus::Counter* requests;
    prometheus::Histogram* latency;
  };
  std::mutex mutex;
  std::map<std::string, Series, std::less<>> series;
};

namespace {
// Seconds; up to 60 s, because a member deadline can be set that long.
const prometheus::Histogram::BucketBoundaries kLatencyBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                                 0.5,   1,      2.5,   5,    10,    30,   60};
}  // namespace

PrometheusServerMetrics::PrometheusServerMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
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
  auto& review_failures = prometheus::BuildCounter()
                              .Name("fedmetrics_delegated_review_failures_total")
                              .Help(
                                  "TokenReviews and SubjectAccessReviews that could not be made (the control plane "
                                  "did not answer, or not with a review); each refused the request it was for.")
                              .Register(*registry_);
  families_ = std::unique_ptr<Families>(new Families{requests,
                                                     latency,
                                                     in_flight,
                                                     review_failures.Add({{"review", "TokenReview"}}),
                                                     review_failures.Add({{"review", "SubjectAccessReview"}}),
                                                     {},
                                                     {}});
}

PrometheusServerMetrics::~PrometheusServerMetrics() = default;

void PrometheusServerMetrics::observe_request(std::string_view group, std::string_view resource, int code,
                                              double seconds) {
  std::string key;
  key.reserve(group.size() + resource.size() + 8);
  key.append(group).push_back('\n');
  key.append(resource).push_back('\n');
  key.append(std::to_string(code));
  Families::Series series{};
  {
    std::lock_guard lock(families_->mutex);
    auto it = families_->series.find(key);
    if (it == families_->series.end()) {
      Families::Series made{
          &families_->requests.Add(
              {{"group", std::string(group)}, {"resource", std::string(resource)}, {"code", std::to_string(code)}}),
          &families_->latency.Add({{"group", std::string(group)}, {"resource", std::string(resource)}},
                                  kLatencyBuckets)};
      it = families_->series.emplace(std::move(key), made).first;
    }
    series = it->second;
  }
  series.requests->Increment();
  series.latency->Observe(seconds);
}

void PrometheusServerMetrics::review_failed(std::string_view review) {
  (review == "TokenReview" ? families_->token_review_failures : families_->access_review_failures).Increment();
}

void PrometheusServerMetrics::request_started() { families_->in_flight.Increment(); }
void PrometheusServerMetrics::request_finished() { families_->in_flight.Decrement(); }

std::shared_ptr<prometheus::Registry> PrometheusServerMetrics::registry() const { return registry_; }

void PrometheusServerMetrics::add_collectable(std::shared_ptr<prometheus::Collectable> collectable) {
  collectables_.push_back(std::move(collectable));
}

std::string PrometheusServerMetrics::serialize() const {
  auto families = registry_->Collect();
  for (const auto& c : collectables_) {
    auto more = c->Collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace fedmetrics::telemetry

// Prometheus' answers (promsource): /api/v1/query bodies through
// parse_query_answer and their conversion to custom, external and pod
// values; /api/v1/series bodies through parse_series_answer.
//
// Properties: an error has a message; a vector gives at most one custom
// value per requested name and one external value per sample.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fedmetrics/promsource/prometheus_answer.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fedmetrics;
  using namespace fedmetrics::promsource;
  const std::string_view body = fedmetrics::fuzz::as_text(data, size);
  const AnswerLimits limits{1u << 16, 1000};
  auto series = parse_series_answer(body, limits);
  if (!series) FUZZ_CHECK(!series.error().message.empty(), "an error without a message");
  auto result = parse_query_answer(body, limits);
  if (!result) {
    FUZZ_CHECK(!result.error().message.empty(), "an error without a message");
    return 0;
  }
  const ResourceInfo* pods = ResourceCatalog::builtin().find({"", "pods"});
  auto custom = custom_metric_values(*result, *pods, "pod", "default", {"a", "b"}, "m", {}, k8s::Timestamp{});
  if (custom) FUZZ_CHECK(custom->size() <= 2, "%zu values for 2 names", custom->size());
  auto external = external_metric_values(*result, "m");
  if (external) FUZZ_CHECK(external->size() == result->samples.size(), "external values lost samples");
  auto pod = pod_metrics(*result, *result, "default", {"a", "b"}, "pod", "container", "container",
                         std::chrono::minutes(1), k8s::Timestamp{});
  if (pod) FUZZ_CHECK(pod->size() <= 2, "%zu pods for 2 names", pod->size());
  (void)node_metrics(*result, *result, {"n1"}, "node", std::chrono::minutes(1), k8s::Timestamp{});
  return 0;
}

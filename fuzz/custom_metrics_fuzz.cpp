// A member's custom.metrics.k8s.io MetricValueList answer, v1beta1 or v1beta2
// as its apiVersion says (metric_value_list_from_json). Round trip: the items,
// written in either version, read back equal (the conversion is lossless;
// times at whole seconds, wire_time.hpp).
#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/metrics_types.hpp"
#include "fuzz_check.hpp"
#include "wire_time.hpp"

using namespace fedmetrics::k8s;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto document = parse_document(fedmetrics::fuzz::as_text(data, size));
  if (!document) return 0;
  const auto items = metric_value_list_from_json(*document);
  if (!items) return 0;
  for (const auto version : {CustomMetricsVersion::V1beta1, CustomMetricsVersion::V1beta2}) {
    const auto written = metric_value_list_to_json(*items, version);
    const auto again = metric_value_list_from_json(written);
    FUZZ_CHECK(again.ok(), "our own list does not decode: %s (%s)", written.dump().c_str(),
               again.error().message.c_str());
    FUZZ_CHECK(*again == fedmetrics::fuzz::at_wire_precision(*items), "round trip changed the items: %s",
               written.dump().c_str());
  }
  return 0;
}

// A member's NodeMetricsList answer (parse_document +
// node_metrics_list_from_json). Round trip: the items, encoded as the server
// encodes them, read back equal (times at whole seconds, wire_time.hpp).
#include <cstddef>
#include <cstdint>

#include "fedmetrics/k8s/metrics_types.hpp"
#include "fuzz_check.hpp"
#include "wire_time.hpp"

using namespace fedmetrics::k8s;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto document = parse_document(fedmetrics::fuzz::as_text(data, size));
  if (!document) return 0;
  const auto items = node_metrics_list_from_json(*document);
  if (!items) return 0;
  const std::string encoded = encode_node_metrics_list(*items);
  auto reparsed = parse_document(encoded);
  FUZZ_CHECK(reparsed.ok(), "our own encoding is not JSON: %s", encoded.c_str());
  const auto again = node_metrics_list_from_json(*reparsed);
  FUZZ_CHECK(again.ok(), "our own encoding does not decode: %s (%s)", encoded.c_str(), again.error().message.c_str());
  FUZZ_CHECK(*again == fedmetrics::fuzz::at_wire_precision(*items), "round trip changed the items: %s",
             encoded.c_str());
  return 0;
}

// A member's PodMetricsList answer, read as the client reads it: the fast
// decoder first (try_decode_pod_metrics_list), the document decoder
// (parse_document + pod_metrics_list_from_json) otherwise. Differential: where
// the fast decoder reads a body, the document decoder reads the same items.
// Round trip: what was read, encoded as the server encodes it, reads back equal
// (times at whole seconds, wire_time.hpp). The transcoder (the text straight
// to encoded list items) reads exactly what the fast decoder reads, and
// writes what encoding its items writes.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fedmetrics/k8s/metrics_list_items.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fuzz_check.hpp"
#include "wire_time.hpp"

using namespace fedmetrics::k8s;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto body = fedmetrics::fuzz::as_text(data, size);
  const auto fast = try_decode_pod_metrics_list(body);
  const ItemPreparation preparation{"resource.karmada.io/query-from-cluster", "member1", {}};
  const auto transcoded = transcode_pod_metrics_list(body, preparation);
  FUZZ_CHECK(transcoded.has_value() == fast.has_value(), "the transcoder and the fast decoder disagree on a body");
  if (fast) {
    FUZZ_CHECK(transcoded->bytes == encode_pod_metrics_items(*fast, preparation).bytes,
               "the transcoder writes other bytes than encoding the decoded items");
  }
  auto document = parse_document(body);
  if (!document) {
    FUZZ_CHECK(!fast, "the fast decoder reads a body that is not JSON");
    return 0;
  }
  const auto tree = pod_metrics_list_from_json(*document);
  if (fast) {
    FUZZ_CHECK(tree.ok(), "the fast decoder reads a list the document decoder refuses: %s",
               tree.error().message.c_str());
    FUZZ_CHECK(*fast == *tree, "the two decoders read different items");
  }
  if (!tree) return 0;
  const std::string encoded = encode_pod_metrics_list(*tree);
  const auto again = try_decode_pod_metrics_list(encoded);
  FUZZ_CHECK(again.has_value(), "our own encoding is not read by the fast decoder: %s", encoded.c_str());
  FUZZ_CHECK(*again == fedmetrics::fuzz::at_wire_precision(*tree), "round trip changed the items: %s", encoded.c_str());
  return 0;
}

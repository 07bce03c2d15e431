// A member's discovery documents: APIGroupList (/apis) and APIResourceList
// (/apis/{group}/{version}), both tried on the same bytes. Round trip: what
// was read, written again, reads back equal.
#include <cstddef>
#include <cstdint>

#include "fedmetrics/k8s/discovery.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fuzz_check.hpp"

using namespace fedmetrics::k8s;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto document = parse_document(fedmetrics::fuzz::as_text(data, size));
  if (!document) return 0;
  if (const auto groups = api_group_list_from_json(*document)) {
    const auto written = api_group_list_to_json(*groups);
    const auto again = api_group_list_from_json(written);
    FUZZ_CHECK(again.ok() && *again == *groups, "APIGroupList round trip: %s", written.dump().c_str());
  }
  if (const auto list = api_resource_list_from_json(*document)) {
    const auto written = to_json(*list);
    const auto again = api_resource_list_from_json(written);
    FUZZ_CHECK(again.ok() && *again == *list, "APIResourceList round trip: %s", written.dump().c_str());
  }
  return 0;
}

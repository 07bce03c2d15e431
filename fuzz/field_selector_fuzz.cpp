// FieldSelector::parse (metrics-server's fields) and parse_for (a core
// resource's fields) on any text; what it accepts prints canonically, and
// that reads back to the same requirements.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/k8s/field_selector.hpp"
#include "fuzz_check.hpp"

using fedmetrics::k8s::FieldSelector;

namespace {
void check_round_trip(std::string_view text, const FieldSelector& parsed, const std::vector<std::string_view>& known) {
  const std::string canonical = parsed.to_string();
  auto again = FieldSelector::parse_for(canonical, known);
  FUZZ_CHECK(again.ok(), "input \"%.*s\" canonical \"%s\" does not parse: %s", static_cast<int>(text.size()),
             text.data(), canonical.c_str(), again.error().message.c_str());
  FUZZ_CHECK(again->requirements() == parsed.requirements(), "input \"%.*s\" canonical \"%s\" reads back otherwise",
             static_cast<int>(text.size()), text.data(), canonical.c_str());
  FUZZ_CHECK(again->to_string() == canonical, "canonical \"%s\" prints as \"%s\"", canonical.c_str(),
             again->to_string().c_str());
  (void)parsed.matches("web", "default");
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = fedmetrics::fuzz::as_text(data, size);
  static const std::vector<std::string_view> metrics_fields = {"metadata.name", "metadata.namespace"};
  static const std::vector<std::string_view> pod_fields = {"metadata.name", "metadata.namespace", "spec.nodeName",
                                                           "status.phase"};
  if (auto parsed = FieldSelector::parse(text)) check_round_trip(text, *parsed, metrics_fields);
  if (auto parsed = FieldSelector::parse_for(text, pod_fields)) check_round_trip(text, *parsed, pod_fields);
  return 0;
}

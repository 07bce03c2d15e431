// LabelSelector::parse on any text, with a requirement cap; what
// it accepts prints canonically (to_string), and that reads back to an equal
// selector that prints the same. The object form (to_object) must read back
// too where it exists, and matching must not crash.
//
// The cap is 100, not the server's 1,000 (kMaxSelectorRequirements): the
// same code refuses at any cap, and 101 requirements fit in 202 bytes, well
// inside this target's max_len (label_selector.options), where 1,001 would
// not. Inputs stay short so that each run costs microseconds, not the
// milliseconds of kilobyte-long selectors.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/label_selector.hpp"
#include "fuzz_check.hpp"

using fedmetrics::k8s::LabelSelector;

namespace {
constexpr std::size_t kMaxRequirements = 100;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = fedmetrics::fuzz::as_text(data, size);
  auto parsed = LabelSelector::parse(text, kMaxRequirements);
  if (!parsed) return 0;
  const std::string canonical = parsed->to_string();
  auto again = LabelSelector::parse(canonical);
  FUZZ_CHECK(again.ok(), "input \"%.*s\" canonical \"%s\" does not parse: %s", static_cast<int>(size), text.data(),
             canonical.c_str(), again.error().message.c_str());
  FUZZ_CHECK(again->to_string() == canonical, "canonical \"%s\" prints as \"%s\"", canonical.c_str(),
             again->to_string().c_str());
  FUZZ_CHECK(*again == *parsed, "input \"%.*s\" canonical \"%s\" reads back to another selector",
             static_cast<int>(size), text.data(), canonical.c_str());
  (void)LabelSelector::from_object(parsed->to_object());
  fedmetrics::k8s::Labels labels;
  for (const auto& r : parsed->requirements()) labels[r.key] = r.values.empty() ? "1" : r.values.front();
  (void)parsed->matches(labels);
  (void)parsed->partition("fedmetrics/cluster");
  return 0;
}

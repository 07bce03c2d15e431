// LabelSelector::parse on any text, with the server's requirement cap; what
// it accepts prints canonically (to_string), and that reads back to an equal
// selector that prints the same. The object form (to_object) must read back
// too where it exists, and matching must not crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/label_selector.hpp"
#include "fuzz_check.hpp"

using fedmetrics::k8s::LabelSelector;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = fedmetrics::fuzz::as_text(data, size);
  auto parsed = LabelSelector::parse(text, 1000);
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

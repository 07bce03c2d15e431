// Quantity::parse on any text; what it accepts prints in canonical form, and
// the canonical form reads back to the same value and, where the format
// survives, prints the same again (Go's resource.Quantity round trip). The JSON decoder (quantity_from_json)
// and the arithmetic on the parsed value must not crash either.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/quantity.hpp"
#include "fuzz_check.hpp"

using fedmetrics::k8s::Quantity;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = fedmetrics::fuzz::as_text(data, size);
  auto parsed = Quantity::parse(text);
  (void)fedmetrics::k8s::quantity_from_json(nlohmann::json(std::string(text)));
  if (!parsed) return 0;
  const Quantity q = *parsed;
  const std::string canonical = q.to_string();
  auto again = Quantity::parse(canonical);
  FUZZ_CHECK(again.ok(), "input \"%.*s\" canonical \"%s\" does not parse: %s", static_cast<int>(size), text.data(),
             canonical.c_str(), again.error().message.c_str());
  FUZZ_CHECK(*again == q, "input \"%.*s\" canonical \"%s\" reads back to another value", static_cast<int>(size),
             text.data(), canonical.c_str());
  // The same text when the format survives the round trip. It need not:
  // as in Go, a BinarySI integer that is no multiple of 1024 prints bare
  // ("19220812.5Ki" -> "19682112000"), and bare digits read back as DecimalSI
  // ("19682112k"). From there on the text is a fixed point.
  const std::string second = again->to_string();
  if (again->format() == q.format()) {
    FUZZ_CHECK(second == canonical, "canonical \"%s\" prints as \"%s\"", canonical.c_str(), second.c_str());
  } else {
    auto third = Quantity::parse(second);
    FUZZ_CHECK(third.ok() && *third == q && third->to_string() == second,
               "canonical \"%s\" -> \"%s\" is no fixed point", canonical.c_str(), second.c_str());
  }
  (void)q.milli_value();
  (void)q.value();
  (void)q.as_double();
  (void)q.plus(q);
  (void)q.minus(q.negated());
  (void)q.times(-1000);
  return 0;
}

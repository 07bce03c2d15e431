// Scenario files of `fedmetrics simulate` (JSON), through run_simulate as
// the command runs them: decode_scenario with its defaults and field errors,
// then every step through the autoscaler's sync() (replica calculation,
// behavior, placement) on whatever numbers the file holds.
//
// What the command promises, checked on every input: it exits 0 or 2; a
// refused file (2) prints nothing on stdout and says why on stderr; an
// accepted one (0) was a JSON object whose "steps" is an array, and printed
// one line per step, each a JSON object with the step's "at". Nothing here
// depends on which fields the reader accepts.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/simulate.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fedmetrics::fuzz::as_text(data, size));
  std::istringstream in{text};
  std::ostringstream out;
  std::ostringstream err;
  const int rc = fedmetrics::autoscaler::run_simulate(in, out, err);
  const std::string printed = out.str();
  FUZZ_CHECK(rc == 0 || rc == 2, "exit status %d", rc);
  if (rc == 2) {
    FUZZ_CHECK(printed.empty(), "a refused scenario printed on stdout: %s", printed.c_str());
    FUZZ_CHECK(!err.str().empty() && err.str() != "\n", "a refused scenario without a message");
    return 0;
  }

  const auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!doc.is_discarded() && doc.is_object(), "exit 0 for a file that is not a JSON object");
  const auto steps = doc.find("steps");
  FUZZ_CHECK(steps != doc.end() && steps->is_array(), "exit 0 without a steps array");
  FUZZ_CHECK(printed.empty() || printed.back() == '\n', "the last line is not ended: %s", printed.c_str());
  std::size_t lines = 0;
  std::istringstream printed_lines(printed);
  for (std::string line; std::getline(printed_lines, line); ++lines) {
    const auto step = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    FUZZ_CHECK(!step.is_discarded() && step.is_object() && step.contains("at"), "line %zu is not a step: %s", lines + 1,
               line.c_str());
  }
  FUZZ_CHECK(lines == steps->size(), "%zu line(s) for %zu step(s)", lines, steps->size());
  return 0;
}

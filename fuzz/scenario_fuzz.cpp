// Scenario files of `fedmetrics simulate` (JSON), through run_simulate as
// the command runs them: decode_scenario with its defaults and field errors,
// then every step through the autoscaler's sync() (replica calculation,
// behavior, placement) on whatever numbers the file holds.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fedmetrics/autoscaler/simulate.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in{std::string(fedmetrics::fuzz::as_text(data, size))};
  std::ostringstream out;
  std::ostringstream err;
  (void)fedmetrics::autoscaler::run_simulate(in, out, err);
  return 0;
}

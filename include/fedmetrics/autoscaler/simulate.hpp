#pragma once
// `fedmetrics simulate SCENARIO.json` (shared/specs/scenario.md): replays a
// scenario file through the same sync() as the live loop and prints one JSON
// line per step.
#include <iosfwd>

namespace fedmetrics::autoscaler {

// Reads the scenario from `scenario`, writes the JSON Lines to `out`, errors
// and warnings to `err`. Returns 0 when every step was evaluated, 2 for a file
// that breaks the contract (the message, naming the field, on `err`; nothing
// on `out`).
int run_simulate(std::istream& scenario, std::ostream& out, std::ostream& err);

}  // namespace fedmetrics::autoscaler

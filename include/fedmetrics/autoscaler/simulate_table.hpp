#pragma once
// `fedmetrics simulate --output table`: the replay as aligned text, one row
// per step, for people (the JSON lines stay the default, for scripts).
#include <string>

#include "fedmetrics/autoscaler/simulate.hpp"

namespace fedmetrics::autoscaler {

// A header and one row per step, columns separated by at least two spaces
// and padded to the widest cell, no trailing spaces:
//   AT   REPLICAS  MIN-MAX  member1  member2  cpu      REASON             EVENTS
//   15s  1->5      1-10     1        -        200%/10%  SucceededRescale
// REPLICAS is the current count, "->" the decision when it differs; one
// column per member (centralized: its replicas, "-" when it has none listed;
// distributed: its HPA's replicas and share "3 [1-6]", "left" when its HPA
// is deleted); one column per spec metric, current/target ("?" when not
// computed); REASON the deciding condition (ReplayStep::reason); EVENTS only
// when a step has any (cron firings, member HPAs created or deleted, moves).
std::string format_table(const Replay& replay);

// `fedmetrics simulate --explain`: for each step, "Step N at AT:" and how it
// decided, as `kubectl fedmetrics explain fhpa` prints a live decision
// (decision.hpp). A distributed step has no decision of fedmetrics' own (the
// members' HPAs decide): it shows the members' replicas and shares instead.
std::string format_explanations(const Replay& replay);

}  // namespace fedmetrics::autoscaler

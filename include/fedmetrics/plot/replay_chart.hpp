#pragma once
// `fedmetrics simulate --plot`: the replay as a chart (pure). On the left
// axis the replicas and the FederatedHPA's bounds, on the right each metric
// against its target; it reads without the table beside it.
#include "fedmetrics/autoscaler/simulate.hpp"
#include "fedmetrics/plot/chart.hpp"

namespace fedmetrics::plot {

// The member colours (light, filled) and the metric colours (dark, lines):
// a member band never has a metric's colour.
const std::vector<Color>& member_palette();
const std::vector<Color>& metric_palette();

// Each step holds from its time until the next step's (every line is a
// step-after line); the last holds for as long as the step before it (a
// single step: one second), so that it shows.
// Centralized: the members' counts stacked in name order (a member absent
// at a step has 0 there), labelled pods when they do not add up to the
// replicas (a Duplicated placement); the FederatedHPA's replicas as a solid
// line; a rescale decided at a step is an Up or Down arrow where the next
// step starts from it, which is where the line and the bars change (after
// the last step, half a step more shows it). Distributed: each member's
// band is its share of maxReplicas, filled to the replicas it runs, its
// unused part lighter; a Diamond on a member's band where max moved to it,
// labelled with how much and from where.
// Both: minReplicas dotted and maxReplicas dash-dotted, so that no bound
// looks like a target (dashed). Metrics that are never computed are left
// out. One metric is drawn in its own unit against its target; several, each
// as a percentage of its target, with one target line at 100.
Chart chart_for(const autoscaler::Replay& replay, const std::string& title);

}  // namespace fedmetrics::plot

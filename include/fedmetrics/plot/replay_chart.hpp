#pragma once
// `fedmetrics simulate --plot`: the replay as a chart (pure). Replicas over
// time stacked per member on the left axis with minReplicas and maxReplicas
// as lines and the rescales marked; each metric against its target on the
// right axis.
#include "fedmetrics/autoscaler/simulate.hpp"
#include "fedmetrics/plot/chart.hpp"

namespace fedmetrics::plot {

// The member colours (light, filled) and the metric colours (dark, lines):
// a member band never has a metric's colour.
const std::vector<Color>& member_palette();
const std::vector<Color>& metric_palette();

// Each step holds from its time until the next step's; the last holds for
// as long as the step before it (a single step: one second), so that it
// shows. Members are stacked in name order; a member absent at a step has 0
// there. Metrics that are never computed are left out. One metric is drawn
// in its own unit with its target as a dashed line; several, each as a
// percentage of its target, with one target line at 100.
// Centralized: a rescale (desired != current) is an Up or Down marker at the
// step, at the new count. Distributed: a step that moves max between members
// gets a Diamond ("rebalance").
Chart chart_for(const autoscaler::Replay& replay, const std::string& title);

}  // namespace fedmetrics::plot

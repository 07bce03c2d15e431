#pragma once
// A loop's wait between passes: `duration` on its Clock, or less when its
// Wakeup is notified first (a watch saw a change, a new leader). Private to
// the controller's loops.
#include "fedmetrics/controller/clock.hpp"
#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::controller {

// On `strand`, the loop's own. Returns when the cancellation of the caller
// comes too (its next co_await throws it).
async::Task<void> sleep_or_wake(const async::Strand& strand, const std::shared_ptr<Clock>& clock,
                                Clock::Duration duration, async::Wakeup& wakeup);

}  // namespace fedmetrics::controller

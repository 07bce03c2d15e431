#pragma once
// The loops' ports to the Karmada control plane, one per concern. src/main
// implements them over HTTPS (one client implements all of them); tests use
// the fakes in test/support. A null port is a feature not configured where
// the feature is optional (see each field).
#include <memory>

#include "fedmetrics/controller/cron_store.hpp"
#include "fedmetrics/controller/event_sink.hpp"
#include "fedmetrics/controller/federated_hpa_store.hpp"
#include "fedmetrics/controller/federated_hpa_writer.hpp"
#include "fedmetrics/controller/placement_reader.hpp"
#include "fedmetrics/controller/scale_client.hpp"

namespace fedmetrics::controller {

struct ControlPlanePorts {
  std::shared_ptr<FederatedHPAStore> federated_hpas;
  std::shared_ptr<FederatedHPAWriter> federated_hpa_writer;
  std::shared_ptr<ScaleClient> scales;
  // Null: placements are not known, every member is asked.
  std::shared_ptr<PlacementReader> placement;
  // Null: no scheduled scaling (the cron loop needs it).
  std::shared_ptr<CronStore> crons;
  std::shared_ptr<EventSink> events;
};

}  // namespace fedmetrics::controller

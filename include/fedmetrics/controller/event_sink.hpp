#pragma once
// Where the loops record Kubernetes Events about the objects they act on.
// Fire and forget, as client-go's EventRecorder: a loop never waits for an
// Event, and one that cannot be written is counted, not an error of the sync.
#include <string>

namespace fedmetrics::controller {

// Who an Event is about (an autoscaling.karmada.io/v1alpha1 object).
struct EventSubject {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string kind = "FederatedHPA";  // or CronFederatedHPA
};

// One occurrence to record.
struct EventOccurrence {
  EventSubject subject;  // the involvedObject
  std::string type;      // Normal, Warning
  std::string reason;    // upstream reasons (SuccessfulRescale, FailedGetScale, ...)
  std::string message;
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Thread-safe; returns at once.
  virtual void record(const EventOccurrence& occurrence) = 0;
};

}  // namespace fedmetrics::controller

#pragma once
// What an Event's field selector can name on the simulated control plane, as
// kube-apiserver allows it: `kubectl describe` finds an object's Events with
// involvedObject.{kind,namespace,name,uid}, `kubectl events --for` with
// involvedObject.kind and .name, and operators filter on type, reason and
// source. Pure.
#include <vector>

#include "fedmetrics/sim/object_store.hpp"

namespace fedmetrics::sim {

// core/v1 Events (pkg/apis/core/v1/conversion.go's field label conversion and
// pkg/registry/core/event/strategy.go ToSelectableFields): involvedObject.kind,
// .namespace, .name, .uid, .apiVersion, .resourceVersion, .fieldPath, reason,
// reportingComponent, source (source.component, else reportingComponent) and
// type.
std::vector<SelectableField> core_event_fields();

// events.k8s.io/v1 Events (pkg/apis/events/v1/conversion.go): the same
// fields under that version's names, regarding.* for involvedObject.* and
// reportingController for reportingComponent; source is
// deprecatedSource.component, else reportingController.
std::vector<SelectableField> events_v1_event_fields();

}  // namespace fedmetrics::sim

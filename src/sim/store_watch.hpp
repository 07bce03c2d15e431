#pragma once
// One watch of the simulated control plane's storage and what it sees of a
// change, as the watch cache's cacheWatcher does (pkg/storage/cacher): the
// object store (object_store.cpp) records each change, asks every watch for
// its event and queues it under the watch's own lock. Internal to the sim
// module.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/field_selector.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/sim/object_store.hpp"

namespace fedmetrics::sim::detail {

using ObjectPtr = std::shared_ptr<const nlohmann::json>;  // stored objects are immutable snapshots

// One entry of the watch history: etcd's event log, across all types.
struct Change {
  std::uint64_t rv = 0;
  std::string group_resource;
  std::string type;    // ADDED, MODIFIED, DELETED
  ObjectPtr object;    // after the change; for DELETED the last state at the delete's resourceVersion
  ObjectPtr previous;  // before a MODIFIED, to see selector transitions
};

struct Watch {
  std::uint64_t id = 0;
  std::string group_resource;
  std::string api_version;  // of the type the watch was started with
  bool namespaced = true;
  std::string namespace_name;
  k8s::LabelSelector labels;
  k8s::FieldSelector fields;
  std::vector<SelectableField> selectable;  // the type's, beyond metadata.name and metadata.namespace
  std::uint64_t after = 0;                  // events at or below this resourceVersion are not for this watch
  WatchSink sink;

  std::mutex mu;  // guards the members below
  std::condition_variable idle;
  std::deque<WatchEvent> queue;
  bool active = true;
  bool draining = false;
  std::thread::id deliverer;

  // In its namespace (when it names one), and selected by its field and label selectors.
  [[nodiscard]] bool matches(const nlohmann::json& object) const;
  // The event of `type` for `object`, in the watch's apiVersion.
  [[nodiscard]] WatchEvent make(std::string type, nlohmann::json object) const;
  // The watch cache's cacheWatcher.convertToWatchEvent: a change that makes an
  // object start matching is ADDED; one that makes it stop matching is DELETED,
  // carrying the previous content at the change's resourceVersion.
  [[nodiscard]] std::optional<WatchEvent> event_for(const Change& change) const;
};

}  // namespace fedmetrics::sim::detail

#pragma once
// What a round trip through our encoders can keep of a decoded item: times
// are read to the nanosecond but written at whole seconds (format_time, as
// Go's metav1.Time; test/k8s/time_test.cpp), so "2026-08-22T10:15:18.0039Z"
// comes back as 10:15:18. The round-trip checks compare the re-read items
// with the decoded ones at that precision; every other field stays exact.
#include <chrono>
#include <vector>

#include "fedmetrics/k8s/metrics_types.hpp"

namespace fedmetrics::fuzz {

inline k8s::Timestamp at_wire_precision(k8s::Timestamp t) { return std::chrono::floor<std::chrono::seconds>(t); }

inline k8s::ObjectMeta at_wire_precision(k8s::ObjectMeta meta) {
  if (meta.creation_timestamp) meta.creation_timestamp = at_wire_precision(*meta.creation_timestamp);
  return meta;
}

template <class Item>
std::vector<Item> at_wire_precision(std::vector<Item> items) {
  for (auto& item : items) {
    if constexpr (requires { item.metadata; }) item.metadata = at_wire_precision(std::move(item.metadata));
    item.timestamp = at_wire_precision(item.timestamp);
  }
  return items;
}

}  // namespace fedmetrics::fuzz

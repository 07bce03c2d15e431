#pragma once
// Members' metrics.k8s.io list items encoded for a merged JSON list, and the
// transcoder that makes them from a member's text without decoding it into
// PodMetrics values (the aggregator's pods lists at 100,000 pods).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fedmetrics/k8s/metrics_types.hpp"

namespace fedmetrics::k8s {

// A member's list items encoded for a merged JSON list, ready to be joined in
// any order: `bytes` holds each item's list-item JSON followed by a ','
// ("{...},{...},"), `keys` each item's namespace and name as they are (the
// merge orders by them). Offsets rather than strings: one buffer per member,
// not one allocation per item.
struct EncodedItems {
  struct Item {
    std::uint32_t begin = 0;  // in bytes; the item's ',' is at begin + size
    std::uint32_t size = 0;
    std::uint32_t key = 0;  // in keys: the namespace, then the name
    std::uint32_t namespace_size = 0;
    std::uint32_t name_size = 0;
  };
  std::string bytes;
  std::string keys;
  std::vector<Item> items;

  [[nodiscard]] std::string_view json(const Item& item) const { return {bytes.data() + item.begin, item.size}; }
  [[nodiscard]] std::string_view namespace_of(const Item& item) const {
    return {keys.data() + item.key, item.namespace_size};
  }
  [[nodiscard]] std::string_view name_of(const Item& item) const {
    return {keys.data() + item.key + item.namespace_size, item.name_size};
  }
};

// What becomes of a member's items in a merged list: the ones `keep` accepts
// (by namespace and name; all when it is empty) are kept, each annotated with
// annotation_key = annotation_value (replacing a value of its own).
struct ItemPreparation {
  std::string annotation_key;
  std::string annotation_value;
  std::function<bool(std::string_view namespace_name, std::string_view name)> keep = {};
};

// Appends `pod`, prepared, to `out` (encode_pod_metrics_item's bytes); false
// when `keep` refuses it. The reference for the transcoder below, and the
// path of the answers it does not take.
bool append_pod_metrics_item(EncodedItems& out, PodMetrics pod, const ItemPreparation& preparation);
bool append_node_metrics_item(EncodedItems& out, NodeMetrics node, const ItemPreparation& preparation);
// Every item of `pods` appended so.
EncodedItems encode_pod_metrics_items(std::vector<PodMetrics> pods, const ItemPreparation& preparation);
// A member's PodMetricsList text straight to encoded items, in one pass and
// without PodMetrics values: the same bytes as decoding it
// (try_decode_pod_metrics_list) and appending every item. nullopt where that
// decoder gives up (any other document, valid or not): decode it then.
std::optional<EncodedItems> transcode_pod_metrics_list(std::string_view body, const ItemPreparation& preparation);
// The text of an empty PodMetricsList (NodeMetricsList) cut where its items
// go: what a merged list's items are written between.
std::pair<std::string, std::string> pod_metrics_list_frame();
std::pair<std::string, std::string> node_metrics_list_frame();

}  // namespace fedmetrics::k8s

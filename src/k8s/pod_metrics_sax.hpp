#pragma once
// The second reader of a member's PodMetricsList, as nlohmann SAX events,
// for the text the scanner (pod_metrics_scan.hpp) does not take: escapes,
// numbers, text other than ASCII. It takes only the shape metrics-server
// writes (strings where strings belong, nulls only where a value may be
// absent, no repeated keys) and gives up on anything else, so that the tree
// decoder (pod_metrics_list_from_json) produces the precise error or reads
// the unusual-but-valid document.
//
// What it reads goes to a Sink (pod_metrics_scan.cpp's, which hands each
// item on as the scanner does). A Sink has:
//   begin_item(); end_item() -> bool (false: give up);
//   name(s), namespace_name(s), label(key, value), annotation(key, value);
//   creation_timestamp(s), timestamp(s), window(s) (never empty) -> bool:
//     false when the text is not a time or a duration;
//   begin_container(); container_name(s); usage(key, value) -> bool: false
//     when the value is not a Quantity.
// Strings are passed as std::string& that the sink may move from. A null
// calls nothing: the field keeps its zero value (Go's), as in the tree decoder.
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/metrics_types.hpp"

namespace fedmetrics::k8s::detail {

template <class Sink>
class PodMetricsListSax {
  using json = nlohmann::json;

 public:
  explicit PodMetricsListSax(Sink& sink) : sink_(sink) {}

  // Non-string scalars are dropped under keys we do not read; anywhere else
  // they are not the common shape: stop, the caller falls back.
  // A null reads as absent, as in the tree decoder (Go's zero value), except
  // where a value is required.
  bool null() {
    if (skipping()) return true;
    switch (take_field()) {
      case Field::None:
      case Field::ItemsElement:
      case Field::ContainersElement:
      case Field::Metadata:
      case Field::LabelValue:
      case Field::AnnotationValue:
      case Field::UsageValue: return give_up();
      default: return true;
    }
  }
  bool boolean(bool) { return other_scalar(); }
  bool number_integer(json::number_integer_t) { return other_scalar(); }
  bool number_unsigned(json::number_unsigned_t) { return other_scalar(); }
  bool number_float(json::number_float_t, const json::string_t&) { return other_scalar(); }
  bool binary(json::binary_t&) { return give_up(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return give_up(); }

  bool string(json::string_t& value) {
    if (skipping()) return true;
    const Field field = take_field();
    switch (field) {
      case Field::Kind: return value.empty() || value == "PodMetricsList" || give_up();
      case Field::ApiVersion: return value.empty() || value == kMetricsGroupVersion || give_up();
      case Field::Name: sink_.name(value); return true;
      case Field::Namespace: sink_.namespace_name(value); return true;
      case Field::CreationTimestamp: return sink_.creation_timestamp(value) || give_up();
      case Field::Timestamp: return sink_.timestamp(value) || give_up();
      case Field::Window: return value.empty() || sink_.window(value) || give_up();
      case Field::LabelValue: sink_.label(map_key_, value); return true;
      case Field::AnnotationValue: sink_.annotation(map_key_, value); return true;
      case Field::ContainerName: sink_.container_name(value); return true;
      case Field::UsageValue: {
        // Go trims spaces around a quantity; such text is rare enough for the slow path.
        if (value.empty() || std::isspace(static_cast<unsigned char>(value.front())) ||
            std::isspace(static_cast<unsigned char>(value.back())))
          return give_up();
        return sink_.usage(map_key_, value) || give_up();
      }
      case Field::Ignored: return true;
      default: return give_up();
    }
  }

  bool start_object(std::size_t) {
    if (skipping()) return ++skip_depth_, true;
    if (stack_.empty()) return push(Ctx::List), true;
    switch (take_field()) {
      case Field::ItemsElement: sink_.begin_item(); return push(Ctx::Item), true;
      case Field::Metadata: return push(Ctx::Meta), true;
      case Field::Labels: return push(Ctx::Labels), true;
      case Field::Annotations: return push(Ctx::Annotations), true;
      case Field::ContainersElement: sink_.begin_container(); return push(Ctx::Container), true;
      case Field::Usage: return push(Ctx::Usage), true;
      case Field::Ignored: return ++skip_depth_, true;
      default: return give_up();
    }
  }

  bool end_object() {
    if (skip_depth_ > 0) return --skip_depth_, true;
    if (stack_.back().ctx == Ctx::Item && (!stack_.back().seen_metadata || !sink_.end_item()))
      return give_up();  // metadata is required
    stack_.pop_back();
    return true;
  }

  bool start_array(std::size_t) {
    if (skipping()) return ++skip_depth_, true;
    switch (take_field()) {
      case Field::Items: return push(Ctx::Items), true;
      case Field::Containers: return push(Ctx::Containers), true;
      case Field::Ignored: return ++skip_depth_, true;
      default: return give_up();
    }
  }

  bool end_array() {
    if (skip_depth_ > 0) return --skip_depth_, true;
    stack_.pop_back();
    return true;
  }

  bool key(json::string_t& name) {
    if (skipping()) return true;
    Frame& frame = stack_.back();
    switch (frame.ctx) {
      case Ctx::List: return known_key(frame, kListKeys, name);
      case Ctx::Item: return known_key(frame, kItemKeys, name);
      case Ctx::Meta: return known_key(frame, kMetaKeys, name);
      case Ctx::Container: return known_key(frame, kContainerKeys, name);
      case Ctx::Labels:
      case Ctx::Annotations:
      case Ctx::Usage:
        // A repeated key: the tree keeps the last one, and so do the maps here.
        map_key_ = std::move(name);
        field_ = frame.ctx == Ctx::Labels        ? Field::LabelValue
                 : frame.ctx == Ctx::Annotations ? Field::AnnotationValue
                                                 : Field::UsageValue;
        return true;
      default: return give_up();
    }
  }

  [[nodiscard]] bool complete() const { return !failed_ && stack_.empty() && skip_depth_ == 0; }

 private:
  enum class Ctx { List, Items, Item, Meta, Labels, Annotations, Containers, Container, Usage };
  enum class Field {
    None,
    Ignored,
    Kind,
    ApiVersion,
    Items,
    ItemsElement,
    Metadata,
    Timestamp,
    Window,
    Containers,
    ContainersElement,
    Name,
    Namespace,
    Labels,
    Annotations,
    CreationTimestamp,
    LabelValue,
    AnnotationValue,
    ContainerName,
    Usage,
    UsageValue,
  };
  struct Frame {
    Ctx ctx;
    std::uint32_t seen = 0;  // known keys met in this object (a repeat gives up)
    bool seen_metadata = false;
  };

  // The keys read in each kind of object; any other is Ignored.
  struct Known {
    std::string_view name;
    Field field;
  };
  static constexpr Known kListKeys[] = {
      {"kind", Field::Kind}, {"apiVersion", Field::ApiVersion}, {"items", Field::Items}};
  static constexpr Known kItemKeys[] = {{"metadata", Field::Metadata},
                                        {"timestamp", Field::Timestamp},
                                        {"window", Field::Window},
                                        {"containers", Field::Containers}};
  static constexpr Known kMetaKeys[] = {{"name", Field::Name},
                                        {"namespace", Field::Namespace},
                                        {"labels", Field::Labels},
                                        {"annotations", Field::Annotations},
                                        {"creationTimestamp", Field::CreationTimestamp}};
  static constexpr Known kContainerKeys[] = {{"name", Field::ContainerName}, {"usage", Field::Usage}};

  template <std::size_t N>
  bool known_key(Frame& frame, const Known (&keys)[N], std::string_view name) {
    for (std::size_t i = 0; i < N; ++i) {
      if (keys[i].name != name) continue;
      if (keys[i].field == Field::Metadata) frame.seen_metadata = true;
      return expect(frame, keys[i].field, static_cast<int>(i));
    }
    return expect(frame, Field::Ignored, -1);
  }

  void push(Ctx ctx) { stack_.push_back(Frame{ctx}); }
  bool other_scalar() { return skipping() || take_field() == Field::Ignored || give_up(); }
  bool skipping() const { return skip_depth_ > 0; }
  bool give_up() {
    failed_ = true;
    return false;
  }
  bool expect(Frame& frame, Field field, int bit) {
    if (bit >= 0) {
      if (frame.seen & (1u << bit)) return give_up();
      frame.seen |= 1u << bit;
    }
    field_ = field;
    return true;
  }
  // What the value about to be read is: the key just read, or an array element.
  Field take_field() {
    if (!stack_.empty()) {
      if (stack_.back().ctx == Ctx::Items) return Field::ItemsElement;
      if (stack_.back().ctx == Ctx::Containers) return Field::ContainersElement;
    }
    // The value of an unknown key is Ignored: a scalar is dropped, a container skipped whole.
    Field field = field_;
    field_ = Field::None;
    return field;
  }
  Sink& sink_;
  std::vector<Frame> stack_;
  Field field_ = Field::None;
  std::string map_key_;
  std::size_t skip_depth_ = 0;
  bool failed_ = false;
};

}  // namespace fedmetrics::k8s::detail

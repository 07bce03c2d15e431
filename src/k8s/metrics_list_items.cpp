// Members' list items encoded for a merged JSON list (EncodedItems), and the
// transcoder of the hot path: a member's PodMetricsList read by the same
// reader as the fast decoder (pod_metrics_sax.hpp) and written straight
// back as list items, each item's text held only until it is written. It
// makes no PodMetrics value: at 1,000 pods per member and 100 members, the
// maps and strings of 100,000 of them cost more than everything else a query
// does. Its bytes are the decoder's and encode_pod_metrics_item's (the
// reference, append_pod_metrics_item): fields in the encoder's order, maps
// sorted with the last of a repeated key kept, quantities, times and
// durations in their canonical text (test/k8s/metrics_list_items_test.cpp).
#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/metrics_list_items.hpp"
#include "k8s/json_subset.hpp"
#include "k8s/json_writer.hpp"
#include "k8s/pod_metrics_sax.hpp"

namespace fedmetrics::k8s {
namespace {

// Item offsets are 32-bit: a member answer is capped far below 4 GiB.
constexpr std::size_t kMaxBytes = std::numeric_limits<std::uint32_t>::max();

bool keeps(const ItemPreparation& preparation, std::string_view namespace_name, std::string_view name) {
  return !preparation.keep || preparation.keep(namespace_name, name);
}

// Records the item written at bytes[begin, end of bytes) and its key, and ends it with ','.
void close_item(EncodedItems& out, std::size_t begin, std::string_view namespace_name, std::string_view name) {
  EncodedItems::Item item;
  item.begin = static_cast<std::uint32_t>(begin);
  item.size = static_cast<std::uint32_t>(out.bytes.size() - begin);
  item.key = static_cast<std::uint32_t>(out.keys.size());
  item.namespace_size = static_cast<std::uint32_t>(namespace_name.size());
  item.name_size = static_cast<std::uint32_t>(name.size());
  out.keys.append(namespace_name);
  out.keys.append(name);
  out.bytes.push_back(',');
  out.items.push_back(item);
}

template <class Item, class Encode>
bool append_item(EncodedItems& out, Item item, const ItemPreparation& preparation, Encode encode) {
  const ObjectMeta& meta = item.metadata;
  if (!keeps(preparation, meta.namespace_name, meta.name)) return false;
  item.metadata.annotations.insert_or_assign(preparation.annotation_key, preparation.annotation_value);
  const std::size_t begin = out.bytes.size();
  out.bytes += encode(item);
  close_item(out, begin, meta.namespace_name, meta.name);
  return true;
}

std::pair<std::string, std::string> frame(std::string empty_list) {
  const std::size_t cut = empty_list.find("[]") + 1;
  return {empty_list.substr(0, cut), empty_list.substr(cut)};
}

// The canonical text of a quantity, time or duration as the member wrote it,
// remembered for the last text seen: a member's pods share their timestamps
// and window, one after the other. Only the last: a map of every distinct
// text costs more than it saves on usage values, which differ pod by pod.
template <class Canonical>
class LastCanonical {
 public:
  explicit LastCanonical(Canonical canonical) : canonical_(std::move(canonical)) {}
  // nullptr when `text` is not one.
  const std::string* get(const std::string& text) {
    if (valid_ && text == text_) return &value_;
    auto value = canonical_(text);
    valid_ = value.has_value();
    if (!valid_) return nullptr;
    text_ = text;
    value_ = std::move(*value);
    return &value_;
  }

 private:
  Canonical canonical_;
  bool valid_ = false;
  std::string text_, value_;
};

std::optional<std::string> canonical_time(const std::string& text) {
  auto t = parse_time(text);
  if (!t) return std::nullopt;
  return format_time(*t);
}
std::optional<std::string> canonical_duration(const std::string& text) {
  auto d = parse_duration(text);
  if (!d) return std::nullopt;
  return format_duration(*d);
}
std::optional<std::string> canonical_quantity(const std::string& text) {
  auto q = Quantity::parse(text);
  if (!q) return std::nullopt;
  return q->to_string();
}

// The reader's events into encoded items. An item's strings are kept in one
// reused buffer (`text_`) until its end, then written in the encoder's order.
class EncodingSink {
 public:
  // `plain`: every string comes from the subset reader, so none needs escaping.
  EncodingSink(EncodedItems& out, const ItemPreparation& preparation, bool plain)
      : out_(out),
        preparation_(preparation),
        plain_(plain),
        created_(canonical_time),
        times_(canonical_time),
        durations_(canonical_duration),
        quantities_(canonical_quantity) {}

  void begin_item() {
    text_.clear();
    name_ = namespace_ = {};
    labels_.clear();
    annotations_.clear();
    creation_timestamp_ = timestamp_ = window_ = {};
    containers_ = 0;
  }
  void name(const std::string& value) { name_ = keep(value); }
  void namespace_name(const std::string& value) { namespace_ = keep(value); }
  void label(const std::string& key, const std::string& value) { labels_.push_back({keep(key), keep(value)}); }
  void annotation(const std::string& key, const std::string& value) {
    annotations_.push_back({keep(key), keep(value)});
  }
  bool creation_timestamp(const std::string& value) { return canonical(created_, value, creation_timestamp_); }
  bool timestamp(const std::string& value) { return canonical(times_, value, timestamp_); }
  bool window(const std::string& value) { return canonical(durations_, value, window_); }
  void begin_container() {
    if (containers_ == container_list_.size()) container_list_.emplace_back();
    Container& c = container_list_[containers_++];
    c.name = {};
    c.usage.clear();
  }
  void container_name(const std::string& value) { container_list_[containers_ - 1].name = keep(value); }
  bool usage(const std::string& key, const std::string& value) {
    Usage usage{keep(key), {}};
    if (!canonical(quantities_, value, usage.value)) return false;
    container_list_[containers_ - 1].usage.push_back(usage);
    return true;
  }
  bool end_item() {
    if (text_.size() > kMaxBytes || out_.bytes.size() > kMaxBytes) return false;
    const std::string_view ns = view(namespace_), name = view(name_);
    if (!keeps(preparation_, ns, name)) return true;
    write_item(ns, name);
    return true;
  }

 private:
  struct Span {
    std::size_t begin = 0, size = 0;
  };
  struct Pair {
    Span key, value;
  };
  struct Usage {
    Span key;
    Span value;  // canonical
  };
  struct Container {
    Span name;
    std::vector<Usage> usage;
  };

  // The canonical text of `text` kept with the item's strings; false when it is not one.
  template <class Cache, class Into>
  bool canonical(Cache& cache, const std::string& text, Into& into) {
    const std::string* value = cache.get(text);
    if (value == nullptr) return false;
    into = keep(*value);
    return true;
  }

  Span keep(const std::string& s) {
    Span span{text_.size(), s.size()};
    text_.append(s);
    return span;
  }
  [[nodiscard]] std::string_view view(Span s) const { return {text_.data() + s.begin, s.size}; }

  // A map's entries in key order, the last of a repeated key kept
  // (std::map's operator[]). An insertion sort, stable: a pod's maps hold a
  // handful of entries, and std::stable_sort would allocate for each.
  template <class Entry>
  void sort_map(std::vector<Entry>& entries) {
    for (std::size_t i = 1; i < entries.size(); ++i) {
      const Entry entry = entries[i];
      std::size_t j = i;
      for (; j > 0 && view(entry.key) < view(entries[j - 1].key); --j) entries[j] = entries[j - 1];
      entries[j] = entry;
    }
    auto out = entries.begin();
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      const auto next = it + 1;
      if (next != entries.end() && view(next->key) == view(it->key)) continue;
      *out++ = *it;
    }
    entries.erase(out, entries.end());
  }

  // A string the member sent: escaped unless the subset reader read it.
  void member_key(JsonWriter& w, std::string_view text) const { plain_ ? w.plain_key(text) : w.key(text); }
  void member_string(JsonWriter& w, std::string_view text) const { plain_ ? w.plain_string(text) : w.string(text); }

  // write_pod's order (metrics_encode.cpp), as a list item.
  void write_item(std::string_view ns, std::string_view name) {
    // The annotation replaces a member's own of the same key.
    annotations_.erase(std::remove_if(annotations_.begin(), annotations_.end(),
                                      [&](const Pair& p) { return view(p.key) == preparation_.annotation_key; }),
                       annotations_.end());
    sort_map(annotations_);
    sort_map(labels_);
    std::string& bytes = out_.bytes;
    const std::size_t begin = bytes.size();
    JsonWriter w(bytes);
    w.begin_object();
    w.plain_key("containers");
    w.begin_array();
    for (std::size_t i = 0; i < containers_; ++i) {
      Container& c = container_list_[i];
      sort_map(c.usage);
      w.begin_object();
      w.plain_key("name");
      member_string(w, view(c.name));
      w.plain_key("usage");
      w.begin_object();
      for (const Usage& q : c.usage) {
        member_key(w, view(q.key));
        w.plain_string(view(q.value));
      }
      w.end_object();
      w.end_object();
    }
    w.end_array();
    w.plain_key("metadata");
    w.begin_object();
    w.plain_key("annotations");
    w.begin_object();
    bool ours_written = false;
    for (const Pair& a : annotations_) {
      if (!ours_written && preparation_.annotation_key < view(a.key)) {
        w.key(preparation_.annotation_key);
        w.string(preparation_.annotation_value);
        ours_written = true;
      }
      member_key(w, view(a.key));
      member_string(w, view(a.value));
    }
    if (!ours_written) {
      w.key(preparation_.annotation_key);
      w.string(preparation_.annotation_value);
    }
    w.end_object();
    w.plain_key("creationTimestamp");
    if (creation_timestamp_) w.plain_string(view(*creation_timestamp_));
    else w.null();
    if (!labels_.empty()) {
      w.plain_key("labels");
      w.begin_object();
      for (const Pair& l : labels_) {
        member_key(w, view(l.key));
        member_string(w, view(l.value));
      }
      w.end_object();
    }
    w.plain_key("name");
    member_string(w, name);
    if (!ns.empty()) {
      w.plain_key("namespace");
      member_string(w, ns);
    }
    w.end_object();
    w.plain_key("timestamp");
    w.plain_string(timestamp_ ? view(*timestamp_) : std::string_view(zero_time()));
    w.plain_key("window");
    w.plain_string(window_ ? view(*window_) : std::string_view(zero_duration()));
    w.end_object();
    close_item(out_, begin, ns, name);
  }

  // What an absent timestamp or window is written as (Go's zero values).
  static const std::string& zero_time() {
    static const std::string text = format_time(Timestamp{});
    return text;
  }
  static const std::string& zero_duration() {
    static const std::string text = format_duration(std::chrono::nanoseconds{0});
    return text;
  }

  EncodedItems& out_;
  const ItemPreparation& preparation_;
  const bool plain_;
  using Canonical = std::optional<std::string> (*)(const std::string&);
  LastCanonical<Canonical> created_, times_, durations_, quantities_;

  std::string text_;  // the current item's strings
  Span name_, namespace_;
  std::vector<Pair> labels_, annotations_;
  std::optional<Span> creation_timestamp_, timestamp_, window_;  // canonical
  std::vector<Container> container_list_;                        // the first containers_ are the current item's
  std::size_t containers_ = 0;
};

}  // namespace

bool append_pod_metrics_item(EncodedItems& out, PodMetrics pod, const ItemPreparation& preparation) {
  return append_item(out, std::move(pod), preparation, encode_pod_metrics_item);
}

EncodedItems encode_pod_metrics_items(std::vector<PodMetrics> pods, const ItemPreparation& preparation) {
  EncodedItems out;
  for (PodMetrics& pod : pods) append_pod_metrics_item(out, std::move(pod), preparation);
  return out;
}

bool append_node_metrics_item(EncodedItems& out, NodeMetrics node, const ItemPreparation& preparation) {
  return append_item(out, std::move(node), preparation, encode_node_metrics_item);
}

std::optional<EncodedItems> transcode_pod_metrics_list(std::string_view body, const ItemPreparation& preparation) {
  if (body.size() > kMaxBytes) return std::nullopt;
  {
    EncodedItems out;
    out.bytes.reserve(body.size() + body.size() / 4);  // the annotation makes items longer
    EncodingSink sink(out, preparation, /*plain=*/true);
    detail::PodMetricsListSax sax(sink);
    if (detail::read_json_subset(body, sax) && sax.complete()) return out;
  }
  // Outside the subset (an escape, a number): nlohmann's parser reads it, as the decoder does.
  EncodedItems out;
  EncodingSink sink(out, preparation, /*plain=*/false);
  detail::PodMetricsListSax sax(sink);
  const bool parsed =
      nlohmann::json::sax_parse(body.begin(), body.end(), &sax, nlohmann::json::input_format_t::json, /*strict=*/true);
  if (!parsed || !sax.complete()) return std::nullopt;
  return out;
}

std::pair<std::string, std::string> pod_metrics_list_frame() { return frame(encode_pod_metrics_list({})); }

std::pair<std::string, std::string> node_metrics_list_frame() { return frame(encode_node_metrics_list({})); }

}  // namespace fedmetrics::k8s

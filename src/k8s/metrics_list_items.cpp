// Members' list items encoded for a merged JSON list (EncodedItems), and the
// transcoder of the hot path: a member's PodMetricsList read by the same
// reader as the fast decoder (pod_metrics_scan.hpp) and written straight
// back as list items. It makes no PodMetrics value: at 1,000 pods per member
// and 100 members, the maps and strings of 100,000 of them cost more than
// everything else a query does. An item whose text is already what the
// encoder writes (our simulator's, a member of ours) is copied as it is with
// the annotation inserted; any other is written from views into the
// member's text. Either way its bytes are the decoder's and
// encode_pod_metrics_item's (the reference, append_pod_metrics_item): fields
// in the encoder's order, maps sorted with the last of a repeated key kept,
// quantities, times and durations in their canonical text
// (test/k8s/metrics_list_items_test.cpp).
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fedmetrics/k8s/metrics_list_items.hpp"
#include "k8s/json_writer.hpp"
#include "k8s/pod_metrics_scan.hpp"

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

// The canonical text of a time or duration as the member wrote it,
// remembered for the last text seen: a member's pods share their timestamps
// and window, one after the other.
template <class Canonical>
class LastCanonical {
 public:
  explicit LastCanonical(Canonical canonical) : canonical_(std::move(canonical)) {}
  // nullptr when `text` is not one; `same`: whether `text` is its canonical text.
  const std::string* get(std::string_view text, bool& same) {
    if (!(valid_ && text == text_)) {
      auto value = canonical_(text);
      valid_ = value.has_value();
      if (!valid_) return nullptr;
      text_.assign(text);
      value_ = std::move(*value);
      same_ = value_ == text_;
    }
    same = same_;
    return &value_;
  }

 private:
  Canonical canonical_;
  bool valid_ = false, same_ = false;
  std::string text_, value_;
};

std::optional<std::string> canonical_time(std::string_view text) {
  auto t = parse_time(text);
  if (!t) return std::nullopt;
  return format_time(*t);
}
std::optional<std::string> canonical_duration(std::string_view text) {
  auto d = parse_duration(text);
  if (!d) return std::nullopt;
  return format_duration(*d);
}

}  // namespace

namespace detail {
bool plainly_canonical_quantity(std::string_view text) {
  std::size_t digits = 0;
  std::uint64_t mantissa = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
    mantissa = mantissa * 10 + static_cast<std::uint64_t>(text[digits++] - '0');
  // Past 15 digits, or a P or E suffix, the value may leave the 64-bit paths: parse it.
  if (digits == 0 || digits > 15) return false;
  if (text[0] == '0') return text.size() == 1;  // "0"; never "0m" nor "05"
  const std::string_view suffix = text.substr(digits);
  if (suffix.size() == 2 && suffix[1] == 'i') {
    int power = 0;  // of 1024
    switch (suffix[0]) {
      case 'K': power = 1; break;
      case 'M': power = 2; break;
      case 'G': power = 3; break;
      case 'T': power = 4; break;
      default: return false;
    }
    // A binary value past 2^63 bytes saturates: well below it only.
    if (mantissa >= std::uint64_t{1} << (62 - 10 * power)) return false;
    return mantissa % 1024 != 0;  // else the next binary suffix
  }
  if (suffix.size() > 1) return false;
  if (!suffix.empty()) {
    switch (suffix[0]) {
      case 'n':
      case 'u':
      case 'm':
      case 'k':
      case 'M':
      case 'G':
      case 'T': break;
      default: return false;  // an exponent, or not a quantity
    }
  }
  return mantissa % 1000 != 0;  // else the next decimal suffix
}
}  // namespace detail

namespace {

// A quantity's canonical text: `text` itself when plainly canonical, else
// parsed and printed into `scratch`; nullopt when it is not a quantity.
std::optional<std::string_view> canonical_quantity(std::string_view text, std::string& scratch) {
  if (detail::plainly_canonical_quantity(text)) return text;
  auto q = Quantity::parse(text);
  if (!q) return std::nullopt;
  scratch = q->to_string();
  return std::string_view(scratch);
}

// A member's items into encoded items: each item copied as it is with our
// annotation inserted where its text is what the encoder writes, else
// written afresh from its values (metrics_encode.cpp's write_pod, as a list
// item). Either way the bytes are append_pod_metrics_item's.
class ItemWriter final : public detail::PodItemHandler {
 public:
  ItemWriter(EncodedItems& out, const ItemPreparation& preparation)
      : out_(out),
        preparation_(preparation),
        created_(canonical_time),
        times_(canonical_time),
        durations_(canonical_duration) {
    JsonWriter w(ours_);
    w.begin_object();
    w.key(preparation.annotation_key);
    w.string(preparation.annotation_value);
    ours_.erase(0, 1);  // "key":"value", without the braces
  }

  void restart() override {
    out_.bytes.clear();
    out_.keys.clear();
    out_.items.clear();
  }

  bool item(const detail::PodItemView& v) override {
    if (out_.bytes.size() > kMaxBytes) return false;
    // Every value is checked, kept or not, as the decoder checks them.
    bool canonical = v.canonical_layout;
    const std::string* created = nullptr;
    const std::string* timestamp = nullptr;
    const std::string* window = nullptr;
    if (!check(created_, v.creation_timestamp, created, canonical) ||
        !check(times_, v.timestamp, timestamp, canonical) || !check(durations_, v.window, window, canonical))
      return false;
    for (std::size_t i = 0; i < v.container_count; ++i) {
      for (const detail::PodItemView::Entry& u : v.containers[i].usage) {
        if (detail::plainly_canonical_quantity(u.value)) continue;
        if (!Quantity::parse(u.value)) return false;
        canonical = false;
      }
    }
    if (!keeps(preparation_, v.namespace_name, v.name)) return true;
    const std::size_t begin = out_.bytes.size();
    if (!(canonical && copy_item(v))) write_item(v, created, timestamp, window);
    close_item(out_, begin, v.namespace_name, v.name);
    return true;
  }

 private:
  using Entry = detail::PodItemView::Entry;
  using Canonical = std::optional<std::string> (*)(std::string_view);

  // The canonical text of a time or duration sent, into `into`; whether the
  // text sent is that text stays in `canonical`. False: not one.
  static bool check(LastCanonical<Canonical>& cache, const std::optional<std::string_view>& text,
                    const std::string*& into, bool& canonical) {
    if (!text) return true;
    bool same = false;
    into = cache.get(*text, same);
    if (into == nullptr) return false;
    canonical = canonical && same;
    return true;
  }

  // The item's own text with our annotation inserted among its annotations
  // (or as the first key of its metadata); false when it has one of our key
  // (the writer replaces it).
  bool copy_item(const detail::PodItemView& v) {
    const std::string_view key = preparation_.annotation_key;
    const Entry* after = nullptr;  // the first of its annotations that sorts after ours
    for (const Entry& a : v.annotations) {
      if (a.key == key) return false;
      if (after == nullptr && key < a.key) after = &a;
    }
    const char* at = nullptr;
    std::string_view before, behind;  // what goes around ours
    if (v.annotations.empty()) {
      at = v.metadata + 1;  // after {
      before = R"("annotations":{)";
      behind = "},";
    } else if (after != nullptr) {
      at = after->key.data() - 1;  // at its "
      behind = ",";
    } else {
      const Entry& last = v.annotations.back();
      at = last.value.data() + last.value.size() + 1;  // at the map's }
      before = ",";
    }
    const std::size_t head = static_cast<std::size_t>(at - v.text.data());
    std::string& bytes = out_.bytes;
    bytes.append(v.text.data(), head);
    bytes.append(before);
    bytes.append(ours_);
    bytes.append(behind);
    bytes.append(v.text.data() + head, v.text.size() - head);
    return true;
  }

  // A map's entries in key order, the last of a repeated key kept
  // (std::map's operator[]). An insertion sort, stable: a pod's maps hold a
  // handful of entries, and std::stable_sort would allocate for each.
  static void sort_map(std::vector<Entry>& entries) {
    for (std::size_t i = 1; i < entries.size(); ++i) {
      const Entry entry = entries[i];
      std::size_t j = i;
      for (; j > 0 && entry.key < entries[j - 1].key; --j) entries[j] = entries[j - 1];
      entries[j] = entry;
    }
    auto out = entries.begin();
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      const auto next = it + 1;
      if (next != entries.end() && next->key == it->key) continue;
      *out++ = *it;
    }
    entries.erase(out, entries.end());
  }
  static const std::vector<Entry>& sorted(const std::vector<Entry>& entries, std::vector<Entry>& scratch) {
    scratch.assign(entries.begin(), entries.end());
    sort_map(scratch);
    return scratch;
  }

  // A string the member sent: escaped unless the scanner read it.
  void member_key(JsonWriter& w, std::string_view text) const { plain_ ? w.plain_key(text) : w.key(text); }
  void member_string(JsonWriter& w, std::string_view text) const { plain_ ? w.plain_string(text) : w.string(text); }

  // write_pod's order (metrics_encode.cpp), as a list item.
  void write_item(const detail::PodItemView& v, const std::string* created, const std::string* timestamp,
                  const std::string* window) {
    plain_ = v.plain;
    JsonWriter w(out_.bytes);
    w.begin_object();
    w.plain_key("containers");
    w.begin_array();
    for (std::size_t i = 0; i < v.container_count; ++i) {
      const detail::PodItemView::Container& c = v.containers[i];
      w.begin_object();
      w.plain_key("name");
      member_string(w, c.name);
      w.plain_key("usage");
      w.begin_object();
      for (const Entry& q : sorted(c.usage, scratch_)) {
        member_key(w, q.key);
        w.plain_string(*canonical_quantity(q.value, quantity_));  // checked by item()
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
    for (const Entry& a : sorted(v.annotations, scratch_)) {
      if (a.key == preparation_.annotation_key) continue;  // ours replaces it
      if (!ours_written && preparation_.annotation_key < a.key) {
        w.raw(ours_);
        ours_written = true;
      }
      member_key(w, a.key);
      member_string(w, a.value);
    }
    if (!ours_written) w.raw(ours_);
    w.end_object();
    w.plain_key("creationTimestamp");
    if (created != nullptr) w.plain_string(*created);
    else w.null();
    if (!v.labels.empty()) {
      w.plain_key("labels");
      w.begin_object();
      for (const Entry& l : sorted(v.labels, scratch_)) {
        member_key(w, l.key);
        member_string(w, l.value);
      }
      w.end_object();
    }
    w.plain_key("name");
    member_string(w, v.name);
    if (!v.namespace_name.empty()) {
      w.plain_key("namespace");
      member_string(w, v.namespace_name);
    }
    w.end_object();
    w.plain_key("timestamp");
    w.plain_string(timestamp != nullptr ? *timestamp : zero_time());
    w.plain_key("window");
    w.plain_string(window != nullptr ? *window : zero_duration());
    w.end_object();
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
  std::string ours_;  // "annotation key":"value", escaped
  LastCanonical<Canonical> created_, times_, durations_;
  bool plain_ = true;
  std::vector<Entry> scratch_;
  std::string quantity_;
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
  EncodedItems out;
  out.bytes.reserve(body.size() + body.size() / 4);  // the annotation makes items longer
  ItemWriter writer(out, preparation);
  if (!detail::read_pod_metrics_list(body, writer)) return std::nullopt;
  return out;
}

std::pair<std::string, std::string> pod_metrics_list_frame() { return frame(encode_pod_metrics_list({})); }

std::pair<std::string, std::string> node_metrics_list_frame() { return frame(encode_node_metrics_list({})); }

}  // namespace fedmetrics::k8s

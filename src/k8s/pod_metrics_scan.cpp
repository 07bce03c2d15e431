// The scanner of pod_metrics_scan.hpp: recursive descent over the shape of
// a PodMetricsList, an iterative skip over the values of keys it does not
// read. The documents it accepts and the ones it gives up on are those of
// the SAX reader (pod_metrics_sax.hpp) on the subset of JSON it takes
// (test/k8s/metrics_list_items_test.cpp holds the transcoder on both readers
// to the same bytes).
#include "k8s/pod_metrics_scan.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/metrics_types.hpp"
#include "k8s/pod_metrics_sax.hpp"

namespace fedmetrics::k8s::detail {
namespace {

using Entry = PodItemView::Entry;

class Scanner {
 public:
  Scanner(std::string_view text, PodItemHandler& handler)
      : p_(text.data()), end_(text.data() + text.size()), handler_(handler) {}

  bool list() {
    KeyOrder order;
    bool ignored = false;  // the list's own layout does not matter
    const bool ok = object([&](std::string_view key) {
      switch (rank_of(key, kListKeys, order, ignored)) {
        case kRepeated: return false;
        case 0: return kind_or_version("PodMetricsList");
        case 1: return kind_or_version(kMetricsGroupVersion);
        case 2: return null() || array([&] { return peek() == '{' && item(); });
        default: return skip_value();
      }
    });
    space();
    return ok && p_ == end_;  // one value, then only white space
  }

 private:
  // ---- the list's shape

  // The list's kind or apiVersion: absent, empty or the one expected.
  bool kind_or_version(std::string_view expected) {
    if (null()) return true;
    std::string_view value;
    return string(value) && (value.empty() || value == expected);
  }

  bool item() {
    PodItemView& v = view_;
    v.name = v.namespace_name = {};
    v.creation_timestamp = v.timestamp = v.window = std::nullopt;
    v.labels.clear();
    v.annotations.clear();
    v.container_count = 0;
    const char* const start = p_;
    const std::size_t spaces = spaces_;
    bool canonical = true;
    KeyOrder order;
    const bool ok = object([&](std::string_view key) {
      const int rank = rank_of(key, kItemKeys, order, canonical);
      if (rank == kRepeated) return false;
      if (rank == kUnknown) return skip_value();
      switch (rank) {
        case 0:
          if (null()) return canonical = false, true;
          return array([&] { return peek() == '{' && container(canonical); });
        case 1:
          if (peek() != '{') return false;
          v.metadata = p_;
          return meta(canonical);
        case 2: return optional_string(v.timestamp, canonical);
        default:
          if (!optional_string(v.window, canonical)) return false;
          if (v.window && v.window->empty()) v.window.reset(), canonical = false;  // "" is absent
          return true;
      }
    });
    if (!ok || !(order.seen & (1u << 1))) return false;  // metadata is required
    v.text = {start, static_cast<std::size_t>(p_ - start)};
    v.canonical_layout = canonical && order.seen == 0xf && spaces == spaces_;
    return handler_.item(v);
  }

  bool meta(bool& canonical) {
    PodItemView& v = view_;
    KeyOrder order;
    bool named = false;
    const bool ok = object([&](std::string_view key) {
      const int rank = rank_of(key, kMetaKeys, order, canonical);
      if (rank == kRepeated) return false;
      if (rank == kUnknown) return skip_value();
      switch (rank) {
        case 0: return string_map(v.annotations, canonical, false);
        case 1: return null() || string(v.creation_timestamp.emplace());
        case 2: return string_map(v.labels, canonical, false);
        case 3:
          if (null()) return canonical = false, true;
          return named = true, string(v.name);
        default:
          if (null()) return canonical = false, true;
          if (!string(v.namespace_name)) return false;
          canonical = canonical && !v.namespace_name.empty();
          return true;
      }
    });
    // The encoder always writes creationTimestamp (null when absent) and name.
    canonical = canonical && (order.seen & (1u << 1)) && named;
    return ok;
  }

  bool container(bool& canonical) {
    PodItemView& v = view_;
    if (v.container_count == v.containers.size()) v.containers.emplace_back();
    PodItemView::Container& c = v.containers[v.container_count++];
    c.name = {};
    c.usage.clear();
    KeyOrder order;
    const bool ok = object([&](std::string_view key) {
      const int rank = rank_of(key, kContainerKeys, order, canonical);
      if (rank == kRepeated) return false;
      if (rank == kUnknown) return skip_value();
      if (null()) return canonical = false, true;
      return rank == 0 ? string(c.name) : string_map(c.usage, canonical, true);
    });
    canonical = canonical && order.seen == 0x3;
    return ok;
  }

  // An object of strings (labels, annotations, a container's usage; null
  // is absent). Laid out as the encoder writes it when it is not empty and
  // its keys increase; a usage map may be empty. A usage value is never
  // empty nor starts or ends with a space (Go trims those: the SAX reader
  // gives them to the tree decoder).
  bool string_map(std::vector<Entry>& into, bool& canonical, bool usage) {
    if (null()) return canonical = false, true;
    if (peek() != '{') return false;
    const bool ok = object([&](std::string_view key) {
      Entry e{key, {}};
      if (!string(e.value)) return false;
      if (usage && (e.value.empty() || e.value.front() == ' ' || e.value.back() == ' ')) return false;
      canonical = canonical && (into.empty() || into.back().key < key);
      into.push_back(e);
      return true;
    });
    canonical = canonical && (usage || !into.empty());
    return ok;
  }

  // A string or null (absent, and then not laid out as the encoder writes it).
  bool optional_string(std::optional<std::string_view>& into, bool& canonical) {
    if (null()) return canonical = false, true;
    return string(into.emplace());
  }

  // The keys read, each kind of object's in the order the encoder writes them.
  static constexpr std::string_view kListKeys[] = {"kind", "apiVersion", "items"};
  static constexpr std::string_view kItemKeys[] = {"containers", "metadata", "timestamp", "window"};
  static constexpr std::string_view kMetaKeys[] = {"annotations", "creationTimestamp", "labels", "name", "namespace"};
  static constexpr std::string_view kContainerKeys[] = {"name", "usage"};
  static constexpr int kUnknown = -1;   // skipped
  static constexpr int kRepeated = -2;  // gives up, as the SAX reader does
  struct KeyOrder {
    int next = 0;  // the rank the encoder writes next
    unsigned seen = 0;
  };
  // The rank of `key` among `names`; another key, or one out of the
  // encoder's order, makes the object other than the encoder writes it.
  template <std::size_t N>
  static int rank_of(std::string_view key, const std::string_view (&names)[N], KeyOrder& order, bool& canonical) {
    int rank = kUnknown;
    for (std::size_t i = 0; i < N && rank == kUnknown; ++i)
      if (names[i] == key) rank = static_cast<int>(i);
    if (rank == kUnknown) return canonical = false, kUnknown;
    const unsigned bit = 1u << rank;
    if (order.seen & bit) return kRepeated;
    order.seen |= bit;
    canonical = canonical && rank >= order.next;
    order.next = rank + 1;
    return rank;
  }

  // ---- JSON

  void space() {
    const char* const start = p_;
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    if (p_ != start) ++spaces_;
  }
  // The next value's first character, 0 at the end.
  char peek() {
    space();
    return p_ == end_ ? '\0' : *p_;
  }
  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0)
      return false;
    p_ += word.size();
    return true;
  }
  bool null() { return peek() == 'n' && literal("null"); }

  // A string of printable ASCII without escapes.
  bool string(std::string_view& into) {
    if (peek() != '"') return false;
    const char* const start = ++p_;
#if defined(__SSE2__)
    // Sixteen bytes at a time to the first that is not plain text: a '"',
    // a '\\', or below 0x20 or above 0x7f (both below 0x20 as signed bytes).
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    while (end_ - p_ >= 16) {
      const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p_));
      const __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)),
                                        _mm_cmplt_epi8(chunk, space));
      if (const int mask = _mm_movemask_epi8(stop); mask != 0) {
        p_ += __builtin_ctz(static_cast<unsigned>(mask));
        break;
      }
      p_ += 16;
    }
#endif
    while (p_ != end_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        into = {start, static_cast<std::size_t>(p_ - start)};
        ++p_;
        return true;
      }
      if (c == '\\' || c < 0x20 || c >= 0x80) return false;
      ++p_;
    }
    return false;
  }

  // What is between `open` and `close`, `each()` reading each member or element.
  template <class Each>
  bool sequence(char open, char close, Each each) {
    if (peek() != open) return false;
    ++p_;
    if (peek() == close) return ++p_, true;
    for (;;) {
      if (!each()) return false;
      const char c = peek();
      if (c == '\0') return false;
      ++p_;
      if (c == close) return true;
      if (c != ',') return false;
    }
  }
  // An object, `member(key)` reading each member's value.
  template <class Member>
  bool object(Member member) {
    return sequence('{', '}', [&] {
      std::string_view key;
      if (!string(key) || peek() != ':') return false;
      ++p_;
      return member(key);
    });
  }
  template <class Element>
  bool array(Element element) {
    return sequence('[', ']', element);
  }

  // Any value of the subset, a loop rather than recursion however deep.
  bool skip_value() {
    std::vector<char>& open = open_;
    open.clear();
    for (;;) {
      const char c = peek();
      std::string_view ignored;
      if (c == '"') {
        if (!string(ignored)) return false;
      } else if (c == '{' || c == '[') {
        ++p_;
        const char close = c == '{' ? '}' : ']';
        if (peek() == close) {
          ++p_;
        } else {
          open.push_back(close);
          if (close == '}' && !(string(ignored) && peek() == ':')) return false;
          if (close == '}') ++p_;
          continue;
        }
      } else if (!(literal("null") || literal("true") || literal("false"))) {
        return false;  // a number, or not JSON
      }
      // After a value: close what ends here, then the next member or element.
      for (;;) {
        if (open.empty()) return true;
        const char next = peek();
        if (next == '\0') return false;
        ++p_;
        if (next == open.back()) {
          open.pop_back();
          continue;
        }
        if (next != ',') return false;
        if (open.back() == '}') {
          if (!(string(ignored) && peek() == ':')) return false;
          ++p_;
        }
        break;
      }
    }
  }

  const char* p_;
  const char* const end_;
  PodItemHandler& handler_;
  std::size_t spaces_ = 0;  // runs of white space met so far
  PodItemView view_;
  std::vector<char> open_;
};

// The SAX reader's events into PodItemViews, for the text the scanner does
// not take: an item's strings are kept in one buffer until its end, then
// handed over as views into it.
class ViewCollector {
 public:
  explicit ViewCollector(PodItemHandler& handler) : handler_(handler) { view_.plain = false; }

  void begin_item() {
    text_.clear();
    name_ = namespace_ = {};
    created_ = timestamp_ = window_ = std::nullopt;
    labels_.clear();
    annotations_.clear();
    containers_ = 0;
  }
  void name(const std::string& value) { name_ = keep(value); }
  void namespace_name(const std::string& value) { namespace_ = keep(value); }
  void label(const std::string& key, const std::string& value) { labels_.push_back({keep(key), keep(value)}); }
  void annotation(const std::string& key, const std::string& value) {
    annotations_.push_back({keep(key), keep(value)});
  }
  // The values are checked by the handler.
  bool creation_timestamp(const std::string& value) { return created_ = keep(value), true; }
  bool timestamp(const std::string& value) { return timestamp_ = keep(value), true; }
  bool window(const std::string& value) { return window_ = keep(value), true; }
  void begin_container() {
    if (containers_ == container_spans_.size()) container_spans_.emplace_back();
    ContainerSpans& c = container_spans_[containers_++];
    c.name = {};
    c.usage.clear();
  }
  void container_name(const std::string& value) { container_spans_[containers_ - 1].name = keep(value); }
  bool usage(const std::string& key, const std::string& value) {
    container_spans_[containers_ - 1].usage.push_back({keep(key), keep(value)});
    return true;
  }
  bool end_item() {
    PodItemView& v = view_;
    v.name = view(name_);
    v.namespace_name = view(namespace_);
    v.creation_timestamp = view(created_);
    v.timestamp = view(timestamp_);
    v.window = view(window_);
    views(labels_, v.labels);
    views(annotations_, v.annotations);
    if (v.containers.size() < containers_) v.containers.resize(containers_);
    v.container_count = containers_;
    for (std::size_t i = 0; i < containers_; ++i) {
      v.containers[i].name = view(container_spans_[i].name);
      views(container_spans_[i].usage, v.containers[i].usage);
    }
    return handler_.item(v);
  }

 private:
  struct Span {
    std::size_t begin = 0, size = 0;
  };
  using Pair = std::pair<Span, Span>;
  struct ContainerSpans {
    Span name;
    std::vector<Pair> usage;
  };

  Span keep(const std::string& s) {
    Span span{text_.size(), s.size()};
    text_.append(s);
    return span;
  }
  [[nodiscard]] std::string_view view(Span s) const { return {text_.data() + s.begin, s.size}; }
  [[nodiscard]] std::optional<std::string_view> view(const std::optional<Span>& s) const {
    if (!s) return std::nullopt;
    return view(*s);
  }
  void views(const std::vector<Pair>& spans, std::vector<Entry>& into) const {
    into.clear();
    for (const auto& [key, value] : spans) into.push_back({view(key), view(value)});
  }

  PodItemHandler& handler_;
  PodItemView view_;
  std::string text_;  // the current item's strings
  Span name_, namespace_;
  std::optional<Span> created_, timestamp_, window_;
  std::vector<Pair> labels_, annotations_;
  std::vector<ContainerSpans> container_spans_;  // the first containers_ are the current item's
  std::size_t containers_ = 0;
};

}  // namespace

bool read_pod_metrics_list(std::string_view text, PodItemHandler& handler) {
  if (scan_pod_metrics_list(text, handler)) return true;
  handler.restart();
  ViewCollector collector(handler);
  PodMetricsListSax sax(collector);
  const bool parsed =
      nlohmann::json::sax_parse(text.begin(), text.end(), &sax, nlohmann::json::input_format_t::json, /*strict=*/true);
  return parsed && sax.complete();
}

bool scan_pod_metrics_list(std::string_view text, PodItemHandler& handler) {
  Scanner scanner(text, handler);
  return scanner.list();
}

}  // namespace fedmetrics::k8s::detail

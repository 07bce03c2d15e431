#pragma once
// The first reader of a member's PodMetricsList on the hot path: a scanner
// written for the one shape metrics-server and our simulator write, which
// hands each item over as views into the member's text (no copy of a string,
// no value made), and says whether the item's text is already, byte for
// byte, what the encoder writes for it (keys in the encoder's order, no white
// space, maps sorted, nothing unknown), so that the transcoder can copy it.
//
// It takes JSON whose strings are printable ASCII without escapes and which
// has no numbers: anything else (an escape, a non-ASCII byte, a number, text
// that is not JSON) ends it with false, and the caller reads the text with
// nlohmann's parser instead (pod_metrics_sax.hpp). So do the documents that
// reader gives up on: a repeated known key, a value of the wrong type, an
// item without metadata, kind or apiVersion of another list. The values'
// texts (times, durations, quantities) are not checked here: the handler
// does, and gives up on one that is not.
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace fedmetrics::k8s::detail {

// One item of the list, as views into the text scanned. The maps are in
// the text's order, repeated keys included.
struct PodItemView {
  struct Entry {
    std::string_view key, value;
  };
  struct Container {
    std::string_view name;
    std::vector<Entry> usage;
  };

  std::string_view text;           // the item, '{' to '}'
  const char* metadata = nullptr;  // in text: its metadata's '{'
  bool plain = true;               // no string needs escaping (the scanner read them)
  std::string_view name, namespace_name;
  std::optional<std::string_view> creation_timestamp, timestamp, window;  // a null or "" window: absent
  std::vector<Entry> labels, annotations;
  std::vector<Container> containers;  // the first container_count are this item's
  std::size_t container_count = 0;
  // The text is laid out as the encoder lays out these values: keys in its
  // (sorted) order with no other key, no white space, maps with keys in
  // strictly increasing order, a non-empty map or namespace where one is
  // written, null only for an absent creationTimestamp. Whether the values
  // are in their canonical text is the handler's to check.
  bool canonical_layout = false;
};

class PodItemHandler {
 public:
  virtual ~PodItemHandler() = default;
  // false: give up on the document.
  virtual bool item(const PodItemView& item) = 0;
  // Forget the items had so far: the document is read again from its start.
  virtual void restart() = 0;
};

// Scans `text`, calling `handler` for each item in order; false when the text
// is outside what this scanner reads (see above) or the handler gave up.
bool scan_pod_metrics_list(std::string_view text, PodItemHandler& handler);

// A member's PodMetricsList, each item to `handler`: scanned, or, when the
// scanner gives up, read again by nlohmann's parser and the SAX reader
// (escapes, numbers, text other than ASCII; the views then point into a
// buffer of the item's strings, `plain` false and never laid out as the
// encoder writes). False where both give up, valid JSON or not: the tree
// decoder (pod_metrics_list_from_json) then reads the document or says why not.
bool read_pod_metrics_list(std::string_view text, PodItemHandler& handler);

// Whether `text` is a quantity written as Quantity::to_string writes it, for
// the forms members send ("2318451n", "14536Ki", "1500m", "0"): at most 15
// digits, no leading zero, a suffix from n to T or Ki to Ti (well below 2^63
// bytes), and a mantissa the next suffix would not take. False when not
// sure: parse it then.
bool plainly_canonical_quantity(std::string_view text);

}  // namespace fedmetrics::k8s::detail

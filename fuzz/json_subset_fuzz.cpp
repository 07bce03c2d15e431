// The JSON subset reader (src/k8s/json_subset.hpp) against nlohmann's strict
// SAX parser on the same bytes. Both ways:
// - whatever ours reads, nlohmann reads too, into the same events;
// - whatever nlohmann reads that lies inside the subset (no escape, no byte
//   outside printable ASCII but JSON's white space, no number), ours reads.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "k8s/json_events.hpp"  // test/k8s/
#include "k8s/json_subset.hpp"

using nlohmann::json;

namespace {

using Recorder = fedmetrics::test::JsonEventRecorder;

// No escape and no byte the subset refuses inside a string; white space
// outside strings is JSON's, which nlohmann checks.
bool subset_bytes(std::string_view text) {
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\' || c >= 0x80) return false;
    if (c < 0x20 && c != ' ' && c != '\n' && c != '\r' && c != '\t') return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fedmetrics::fuzz::as_text(data, size));
  Recorder ours;
  const bool ours_read = fedmetrics::k8s::detail::read_json_subset(text, ours);
  Recorder theirs;
  const bool theirs_read = json::sax_parse(text.begin(), text.end(), &theirs, json::input_format_t::json, true);
  if (ours_read) {
    FUZZ_CHECK(theirs_read, "ours reads \"%s\", nlohmann does not", text.c_str());
    FUZZ_CHECK(ours.events == theirs.events, "different events for \"%s\"", text.c_str());
  }
  // A control byte inside a string is outside the subset and refused by
  // nlohmann too; \t\n\r inside a string likewise; so the byte test suffices.
  if (theirs_read && !theirs.saw_number && subset_bytes(text)) {
    FUZZ_CHECK(ours_read, "nlohmann reads \"%s\" inside the subset, ours does not", text.c_str());
  }
  return 0;
}

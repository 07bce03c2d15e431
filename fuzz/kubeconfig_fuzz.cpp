// Kubeconfig YAML (Karmada's members.config, --kubeconfig) through
// parse_kubeconfig: yaml-cpp, then our reading of clusters, users and
// contexts. Relative file references resolve under a directory that does
// not exist, so a fuzzed file names no file we hold. Then again with
// --member-contexts (a filter that skips the other contexts), unless the text
// is not YAML at all: that answer comes from YAML::Load before any context
// is read, so a second call would only repeat yaml-cpp's work.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fedmetrics/clusterclient/kubeconfig.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fedmetrics::fuzz::as_text(data, size));
  const auto all = fedmetrics::clusterclient::parse_kubeconfig(text, "/nonexistent-fuzz-dir");
  if (!all && all.error().message.starts_with("not valid YAML")) return 0;
  (void)fedmetrics::clusterclient::parse_kubeconfig(text, "/nonexistent-fuzz-dir", {"member1"});
  return 0;
}

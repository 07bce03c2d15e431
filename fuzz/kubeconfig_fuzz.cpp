// Kubeconfig YAML (Karmada's members.config, --kubeconfig) through
// parse_kubeconfig: yaml-cpp, then our reading of clusters, users and
// contexts. Relative file references resolve under a directory that does
// not exist, so a fuzzed file names no file we hold. Then again with
// --member-contexts (a filter that skips the other contexts), unless the text
// is not YAML at all: that answer comes from YAML::Load before any context
// is read, so a second call would only repeat yaml-cpp's work.
//
// Properties: every endpoint read has a name and a server, and a client
// certificate only with its key; an error has a message; and the filter only
// skips: when the whole file reads, --member-contexts member1 gives exactly
// the member1 endpoints of the whole file (the same values, in the same
// order), or, when there are none, the error that names the missing context.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "fedmetrics/kube/kubeconfig.hpp"
#include "fuzz_check.hpp"

namespace {

using fedmetrics::kube::ClusterEndpoint;

void check_endpoints(const std::vector<ClusterEndpoint>& endpoints) {
  for (const auto& e : endpoints) {
    FUZZ_CHECK(!e.name.empty(), "an endpoint without a name (server \"%s\")", e.server.c_str());
    FUZZ_CHECK(!e.server.empty(), "endpoint \"%s\" without a server", e.name.c_str());
    FUZZ_CHECK(e.client_cert_pem.empty() == e.client_key_pem.empty(),
               "endpoint \"%s\": a client certificate without its key, or a key without its certificate",
               e.name.c_str());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fedmetrics::fuzz::as_text(data, size));
  const auto all = fedmetrics::kube::parse_kubeconfig(text, "/nonexistent-fuzz-dir");
  if (!all) {
    FUZZ_CHECK(!all.error().message.empty(), "an error without a message");
    if (all.error().message.starts_with("not valid YAML")) return 0;
  } else {
    check_endpoints(*all);
  }

  const auto one = fedmetrics::kube::parse_kubeconfig(text, "/nonexistent-fuzz-dir", {"member1"});
  if (!one) {
    FUZZ_CHECK(!one.error().message.empty(), "an error without a message (--member-contexts member1)");
  } else {
    check_endpoints(*one);
    FUZZ_CHECK(!one->empty(), "--member-contexts member1 read without error but gave no endpoint");
    for (const auto& e : *one) FUZZ_CHECK(e.name == "member1", "--member-contexts member1 gave \"%s\"", e.name.c_str());
  }
  if (!all) return 0;  // a context the filter skips may hold the error: nothing more to compare
  std::vector<ClusterEndpoint> expected;
  std::copy_if(all->begin(), all->end(), std::back_inserter(expected),
               [](const ClusterEndpoint& e) { return e.name == "member1"; });
  if (expected.empty()) {
    FUZZ_CHECK(!one && one.error().message.starts_with("--member-contexts: context \"member1\""),
               "no context member1 in the file, yet --member-contexts member1 did not say so");
  } else {
    FUZZ_CHECK(one, "the file reads, but not with --member-contexts member1: %s", one.error().message.c_str());
    FUZZ_CHECK(*one == expected, "--member-contexts member1 read member1 differently (%zu endpoint(s), %zu expected)",
               one->size(), expected.size());
  }
  return 0;
}

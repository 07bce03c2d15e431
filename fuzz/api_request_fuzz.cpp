// A request target as a client sends it, through everything that reads one:
// k8s::parse_request_target (percent-decoding, query form-decoding) and the
// server's parse_api_request under each method. The first byte picks the
// method; the rest is the target. Checked: a query the server would forward
// names no namespace or object "." / ".." or with '/', and stays within the
// selector bounds (kMaxSelectorRequirements).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "fedmetrics/k8s/url.hpp"
#include "fuzz_check.hpp"
#include "server/api_request.hpp"

namespace {

using fedmetrics::server::kMaxSelectorRequirements;

bool forwardable_name(std::string_view name) {
  return name != "." && name != ".." && name.find('/') == std::string_view::npos;
}

void check_query(const fedmetrics::server::ApiRequest& request) {
  if (const auto* q = std::get_if<fedmetrics::aggregator::ResourceMetricsQuery>(&request)) {
    FUZZ_CHECK(forwardable_name(q->namespace_name) && forwardable_name(q->name), "pods/nodes query names \"%s\"/\"%s\"",
               q->namespace_name.c_str(), q->name.c_str());
    FUZZ_CHECK(q->label_selector.requirements().size() <= kMaxSelectorRequirements, "label selector past the cap");
  } else if (const auto* c = std::get_if<fedmetrics::aggregator::CustomMetricsQuery>(&request)) {
    FUZZ_CHECK(forwardable_name(c->namespace_name) && forwardable_name(c->name), "custom query names \"%s\"/\"%s\"",
               c->namespace_name.c_str(), c->name.c_str());
    FUZZ_CHECK(c->label_selector.requirements().size() <= kMaxSelectorRequirements &&
                   c->metric_selector.requirements().size() <= kMaxSelectorRequirements,
               "selector past the cap");
  } else if (const auto* e = std::get_if<fedmetrics::aggregator::ExternalMetricsQuery>(&request)) {
    FUZZ_CHECK(forwardable_name(e->namespace_name), "external query namespace \"%s\"", e->namespace_name.c_str());
    FUZZ_CHECK(e->metric_selector.requirements().size() <= kMaxSelectorRequirements, "selector past the cap");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static constexpr std::string_view kMethods[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "get"};
  if (size == 0) return 0;
  const std::string_view method = kMethods[data[0] % std::size(kMethods)];
  const auto target = fedmetrics::fuzz::as_text(data + 1, size - 1);

  if (auto parsed = fedmetrics::k8s::parse_request_target(target)) {
    for (const auto& segment : parsed->segments) FUZZ_CHECK(!segment.empty(), "an empty segment survived");
    (void)fedmetrics::k8s::query_bool(parsed->query, "watch");
  }
  std::string decoded;
  (void)fedmetrics::k8s::percent_decode_path(target, decoded);
  check_query(fedmetrics::server::parse_api_request(method, target));
  (void)fedmetrics::server::parse_group_resource(target);
  return 0;
}

#pragma once
// Request-target decoding as a Go API server does it (Go's net/url and net/http):
// the path is percent-decoded whole and then split on '/', the query is
// form-decoded as url.ParseQuery and read with url.Values.Get. Pure; used by
// our API server and by the simulated member clusters.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fedmetrics::k8s {

// A decoded query string, one value a key: the first of a repeated key
// (url.Values.Get).
using QueryValues = std::map<std::string, std::string, std::less<>>;

// Percent-decodes a path as Go's url.PathUnescape does ('+' stays '+'); false
// on a bad escape.
bool percent_decode_path(std::string_view in, std::string& out);

// Form-decodes a query string as Go's url.ParseQuery ('+' is a space); the
// first value of a repeated key wins. Malformed pairs (a bad escape, or a ';'
// since Go 1.17) are skipped, as Go does.
QueryValues parse_query(std::string_view query);

// The value of `key`, empty when absent (url.Values.Get).
std::string query_value(const QueryValues& query, std::string_view key);

// A boolean query parameter as apiserver decodes ListOptions
// (runtime.Convert_Slice_string_To_bool): absent is false; present and
// neither "0" nor "false" (any case) is true, so the Python client's
// "watch=True" and a bare "watch=" are both true.
bool query_bool(const QueryValues& query, std::string_view key);

struct RequestTarget {
  std::vector<std::string> segments;  // of the decoded path, empty ones dropped
  QueryValues query;
};

// Splits an origin-form request target (path and query) and decodes both.
// Decode first, split after: "%2A%2Fhttp_requests" is two segments, as on a
// Go server. nullopt on a bad percent escape in the path.
std::optional<RequestTarget> parse_request_target(std::string_view target);

}  // namespace fedmetrics::k8s

#pragma once
// What kubectl says about an answer, for the plugin to say it alike: the
// `Warning` headers it prints to stderr (client-go rest/warnings.go) and its
// error lines (kubectl cmd/util/helpers.go CheckErr, client-go's errors for
// an answer that is not a Status). kubectl exits 1 after any of these errors.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fedmetrics::plugin {

// The texts of one `Warning` header value: `299 - "text"` (RFC 7234 warn-code,
// agent, quoted text with backslash escapes, optional date), several joined
// by commas. Other codes than 299 and malformed values give nothing, as
// client-go ignores them.
std::vector<std::string> parse_warning_header(std::string_view value);

// The lines to print for the Warning headers of an answer, in order,
// without repeats ("Warning: <text>"; kubectl deduplicates).
std::vector<std::string> warning_lines(const std::vector<std::string>& header_values);

// How an HTTP error answer is reported. `body` is the answer; `verb` and
// `resource` ("get", "pods.metrics.k8s.io") and `name` complete client-go's
// generic message when the body is not a Status:
//   Error from server (ServiceUnavailable): the server is currently unable to handle the request (get
//   pods.metrics.k8s.io)
// A Status body gives `Error from server (<reason>): <message>` (or
// `Error from server: <message>` without a reason); 401 gives
// `error: You must be logged in to the server (<message>)`.
std::string server_error_line(int http_status, std::string_view body, std::string_view verb, std::string_view resource,
                              std::string_view name = {});

// The reason of a Status in an error answer ("NotFound"), empty when none.
std::string status_reason(int http_status, std::string_view body);

// A request that got no answer: kubectl's "The connection to the server
// HOST was refused - did you specify the right host or port?" when refused,
// else "Unable to connect to the server: <detail>".
std::string connection_error_line(bool refused, std::string_view host, std::string_view detail);

}  // namespace fedmetrics::plugin

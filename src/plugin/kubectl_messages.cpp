#include "fedmetrics/plugin/kubectl_messages.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/k8s/status_reason.hpp"

namespace fedmetrics::plugin {

namespace {

void skip_spaces(std::string_view& s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
}

// A quoted-string at the front of `s` (RFC 7230 3.2.6): its text, unescaped.
std::optional<std::string> quoted(std::string_view& s) {
  if (s.empty() || s.front() != '"') return std::nullopt;
  std::string out;
  for (std::size_t i = 1; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\') {
      if (++i == s.size()) return std::nullopt;
      out.push_back(s[i]);
    } else if (c == '"') {
      s.remove_prefix(i + 1);
      return out;
    } else {
      out.push_back(c);
    }
  }
  return std::nullopt;  // unterminated
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

std::vector<std::string> parse_warning_header(std::string_view value) {
  // client-go's ParseWarningHeaders: warn-code SP warn-agent SP warn-text [SP warn-date], comma separated.
  std::vector<std::string> out;
  std::string_view s = value;
  while (true) {
    skip_spaces(s);
    if (s.empty()) break;
    if (s.size() < 4 || !std::all_of(s.begin(), s.begin() + 3, [](char c) { return c >= '0' && c <= '9'; }) ||
        s[3] != ' ')
      break;
    int code = std::stoi(std::string(s.substr(0, 3)));
    s.remove_prefix(4);
    auto agent_end = s.find(' ');
    if (agent_end == 0 || agent_end == std::string_view::npos) break;
    s.remove_prefix(agent_end + 1);
    auto text = quoted(s);
    if (!text) break;
    skip_spaces(s);
    if (!s.empty() && s.front() == '"' && !quoted(s)) break;  // the optional warn-date
    skip_spaces(s);
    if (code == 299 && !text->empty()) out.push_back(std::move(*text));
    if (s.empty()) break;
    if (s.front() != ',') break;  // malformed: keep what came before, as client-go
    s.remove_prefix(1);
  }
  return out;
}

std::vector<std::string> warning_lines(const std::vector<std::string>& header_values) {
  std::vector<std::string> lines;
  for (const auto& value : header_values)
    for (auto& text : parse_warning_header(value)) {
      std::string line = "Warning: " + text;
      if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(std::move(line));
    }
  return lines;
}

std::string status_reason(int http_status, std::string_view body) {
  auto doc = nlohmann::json::parse(body, nullptr, false);
  if (!doc.is_discarded())
    if (auto status = k8s::Status::from_json(doc)) return status->reason;
  return std::string(k8s::reason_for_code(http_status));
}

std::string server_error_line(int http_status, std::string_view body, std::string_view verb, std::string_view resource,
                              std::string_view name) {
  std::string reason, message;
  auto doc = nlohmann::json::parse(body, nullptr, false);
  std::optional<k8s::Status> status;
  if (!doc.is_discarded())
    if (auto decoded = k8s::Status::from_json(doc)) status = std::move(*decoded);
  if (status) {
    reason = status->reason;
    message = status->message;
  } else {
    // client-go's error for an answer that is no Status (apimachinery
    // errors.NewGenericServerResponse), e.g. kube-aggregator's plain
    // "service unavailable" while the APIService is not Available.
    std::string server_message = trim(body);
    reason = status_reason(http_status, body);
    switch (http_status) {
      case 400: message = "the server rejected our request for an unknown reason"; break;
      case 401: message = "the server has asked for the client to provide credentials"; break;
      case 403: message = server_message; break;  // it says who may not do what
      case 404: message = "the server could not find the requested resource"; break;
      case 405: message = "the server does not allow this method on the requested resource"; break;
      case 406:
      case 415: message = "the server was unable to respond with a content type that the client supports"; break;
      case 409: message = "the server reported a conflict"; break;
      case 422: message = "the server rejected our request due to an error in our request"; break;
      case 429: message = "the server has received too many requests and has asked us to try again later"; break;
      case 503: message = "the server is currently unable to handle the request"; break;
      case 504:
        message =
            "the server was unable to return a response in the time allotted, but may still be processing the request";
        break;
      default:
        if (http_status >= 500)
          message = "an error on the server (" +
                    nlohmann::json(server_message).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                    ") has prevented the request from succeeding";
        else
          message = "the server responded with the status code " + std::to_string(http_status) +
                    " but did not return more information";
    }
    if (!resource.empty()) {
      message += " (" + std::string(verb) + " " + std::string(resource);
      if (!name.empty()) message += " " + std::string(name);
      message += ")";
    }
  }
  if (reason == "Unauthorized") return "error: You must be logged in to the server (" + message + ")";
  if (reason.empty()) return "Error from server: " + message;
  return "Error from server (" + reason + "): " + message;
}

std::string connection_error_line(bool refused, std::string_view host, std::string_view detail) {
  if (refused)
    return "The connection to the server " + std::string(host) +
           " was refused - did you specify the right host or port?";
  return "Unable to connect to the server: " + std::string(detail);
}

}  // namespace fedmetrics::plugin

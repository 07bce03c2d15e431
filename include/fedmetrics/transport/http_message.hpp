#pragma once
// An HTTP exchange as plain values, free of Beast, so that request handling is
// a plain function that unit tests call without sockets.
#include <string>
#include <utility>
#include <vector>

namespace fedmetrics::transport {

struct HttpRequest {
  std::string method;  // "GET"
  std::string target;  // "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Dweb"
  std::vector<std::pair<std::string, std::string>> headers = {};  // as received, in order
  std::string body = {};
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers (Warning, ...)
};

}  // namespace fedmetrics::transport

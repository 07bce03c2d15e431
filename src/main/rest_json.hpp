#pragma once
// One JSON request to a Kubernetes API server (the control plane or a
// member), as a coroutine: the HTTP status and the JSON body, or an error
// whose message is the request and the server's Status message. Shared by
// the control-plane and member-HPA clients.
#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::cli {

struct JsonReply {
  int status = 0;  // HTTP status, 0 when there was no answer
  k8s::Expected<nlohmann::json> body = k8s::Error{""};
};

// The error names the request ("PUT /apis/...: <Status message>"). Only
// merge PATCHes are replayed on a reused connection that turns out closed.
// Answered by `deadline` (the HTTPS client's guarantee).
async::Task<JsonReply> request_json(kube::HttpsClient& client, std::string method, std::string path,
                                    std::string content_type, std::string body,
                                    std::chrono::steady_clock::time_point deadline);

// The same through a callback (`done` once, from the client's thread): for
// the Event writes, which nothing awaits.
void send_json(kube::HttpsClient& client, std::string method, std::string path, std::string content_type,
               std::string body, std::chrono::steady_clock::time_point deadline, std::function<void(JsonReply)> done);

// The body as `true` when the request succeeded: for writes whose answer is not read.
k8s::Expected<bool> written(const JsonReply& reply);

// The path of a scale target (a Deployment, ...) in `ns`: its template in
// the control plane, the workload itself in a member.
std::string target_path(const std::string& ns, const autoscaler::CrossVersionObjectReference& target);

}  // namespace fedmetrics::cli

#pragma once
// One JSON request to a Kubernetes API server (the control plane or a
// member), answered with the HTTP status and the JSON body, or an error whose
// message is the request and the server's Status message. Shared by the
// control-plane and member-HPA clients.
#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::cli {

// `done` gets the HTTP status (0 when there was no answer) and the JSON
// answer, or an error naming the request ("PUT /apis/...: <Status message>").
// Only merge PATCHes are replayed on a reused connection that turns out closed.
void send_json(kube::HttpsClient& client, std::string method, std::string path, std::string content_type,
               std::string body, std::chrono::steady_clock::time_point deadline,
               std::function<void(int, k8s::Expected<nlohmann::json>)> done);

}  // namespace fedmetrics::cli

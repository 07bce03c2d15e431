#pragma once
// One JSON request to a Kubernetes API server (the control plane or a
// member), as a coroutine: the HTTP status and the JSON body, or an error
// whose message is the request and the server's Status message. Shared by
// the control-plane and member-HPA clients.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/kube/resource_path.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::kubeclient {

struct JsonReply {
  int status = 0;  // HTTP status, 0 when there was no answer
  k8s::Expected<nlohmann::json> body = k8s::Error{""};
};

// The error names the request ("PUT /apis/...: <Status message>"). Only
// merge PATCHes are replayed on a reused connection that turns out closed.
// Answered by `deadline` (the HTTPS client's guarantee). The client is
// held by the request from the call on.
async::Task<JsonReply> request_json(std::shared_ptr<kube::HttpsClient> client, std::string method,
                                    kube::ResourcePath path, std::string content_type, std::string body,
                                    kube::Deadline deadline);

// The same through the client's callback API (`done` once, from the
// client's thread): for the Event writes, whose port takes a callback.
void send_json(kube::HttpsClient& client, std::string method, const kube::ResourcePath& path, std::string content_type,
               std::string body, kube::Deadline deadline, std::function<void(JsonReply)> done);

// The body as `true` when the request succeeded: for writes whose answer is not read.
k8s::Expected<bool> written(const JsonReply& reply);

// The items of a List answer, or "<list> without items" (`list`: "FederatedHPA list").
k8s::Expected<std::vector<nlohmann::json>> items_of(JsonReply reply, const std::string& list);

// An autoscaling.karmada.io/v1alpha1 collection (all namespaces when `ns`
// is empty) or, with a name, one of its objects.
kube::ResourcePath karmada_autoscaling(std::string resource, std::string ns = {}, std::string name = {});

// The path of a scale target (a Deployment, ...) in `ns`: its template in
// the control plane, the workload itself in a member.
kube::ResourcePath target_path(const std::string& ns, const autoscaler::CrossVersionObjectReference& target);

}  // namespace fedmetrics::kubeclient

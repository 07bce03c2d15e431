#pragma once
// What the plugin's commands share: kubectl's global flags, and the session
// to the server of the kubeconfig's context they open.
#include <chrono>
#include <functional>
#include <future>
#include <optional>
#include <ostream>
#include <memory>
#include <string>

#include "fedmetrics/clusterclient/rest_member_cluster.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/kube/kubectl_config.hpp"
#include "fedmetrics/plugin/kubectl_messages.hpp"

namespace fedmetrics::plugin {

// kubectl's global flags.
struct GlobalOptions {
  std::string kubeconfig;
  std::string context;
  std::string namespace_name;
  std::string request_timeout = "0";
};

// One HTTPS client to the server of the chosen context, used synchronously:
// this is a command line program, its main thread waits for each answer.
class Session {
 public:
  // `timeout`: each request's, as kubectl's --request-timeout.
  Session(const std::string& server, std::chrono::steady_clock::duration timeout)
      : timeout_(timeout), host_(host_of(server)) {}

  // The session to `endpoint`, or the error line for an endpoint the client
  // cannot use (a server that is not an https:// URL, an unreadable client
  // certificate): the kube client's constructor reports those by throwing,
  // as every configuration error, and here that becomes kubectl's line.
  static k8s::Expected<std::unique_ptr<Session>> open(kube::ClusterEndpoint endpoint,
                                                      std::chrono::steady_clock::duration timeout) {
    auto session = std::make_unique<Session>(endpoint.server, timeout);
    kube::ClientOptions options;
    options.user_agent = "kubectl-fedmetrics/v0.1.0";
    options.peer_name = "the server";
    options.max_connections = 16;  // the members' node reads go out together
    try {
      session->client_ = std::make_unique<kube::HttpsClient>(session->runtime_, std::move(endpoint), options);
    } catch (const std::exception& e) {
      return k8s::Error{std::string("error: ") + e.what()};
    }
    return session;
  }

  // Sends GET `target`; the answer, or the reason there is none.
  std::future<kube::HttpResult> get(std::string target) {
    kube::OutgoingRequest request;
    request.target = std::move(target);
    request.headers = {{"Accept", "application/json"}};
    request.want_headers = true;
    auto promise = std::make_shared<std::promise<kube::HttpResult>>();
    auto answer = promise->get_future();
    client_->send(std::move(request), std::chrono::steady_clock::now() + timeout_,
                  [promise](kube::HttpResult result) { promise->set_value(std::move(result)); });
    return answer;
  }

  // kubectl's line for a request that got no answer.
  [[nodiscard]] std::string connection_error(const aggregator::MemberError& e) const {
    return connection_error_line(
        e.kind == aggregator::MemberError::Kind::Refused && e.message.find("connection refused") != std::string::npos,
        host_, e.message);
  }

 private:
  static std::string host_of(const std::string& server) {
    std::string host = server;
    if (auto scheme = host.find("://"); scheme != std::string::npos) host = host.substr(scheme + 3);
    if (auto slash = host.find('/'); slash != std::string::npos) host.resize(slash);
    return host;
  }

  kube::ClientRuntime runtime_{1};
  std::unique_ptr<kube::HttpsClient> client_;  // destroyed before the runtime
  std::chrono::steady_clock::duration timeout_;
  std::string host_;
};

// The session to the server of the chosen context, and the namespace
// (-n, else the context's, else "default"); or kubectl's error line.
struct OpenedSession {
  std::unique_ptr<Session> session;
  std::string namespace_name;
};
k8s::Expected<OpenedSession> open_session(const GlobalOptions& options);

// Runs a command and ends as kubectl does (cmdutil.CheckErr): 0, or 1 after
// its error line on `err`. An exception (a defect, or an answer no rule
// expected) is an error line too, never an abort.
int run_as_kubectl(const std::function<std::optional<k8s::Error>()>& command, std::ostream& out, std::ostream& err);

}  // namespace fedmetrics::plugin

#pragma once
// A Kubernetes API server in the test's own process, for the control-plane
// client under load: on 127.0.0.1 (port 0) over TLS, it keeps Leases
// (coordination.k8s.io/v1) as kube-apiserver does (404 for none, a POST
// creates, a PUT must carry the current resourceVersion or is refused 409)
// and answers every other request `delay` after it arrives, 200 and an empty
// object, so that a test can fill the client's connections with slow
// requests and see what else still gets through.
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/base64.hpp"
#include "fedmetrics/kube/kubeconfig.hpp"
#include "fedmetrics/transport/async.hpp"
#include "fedmetrics/transport/self_signed.hpp"
#include "fedmetrics/transport/tls_server.hpp"

namespace fedmetrics::testing {

class FakeApiServer {
 public:
  explicit FakeApiServer(std::chrono::milliseconds delay = {}) : delay_ms_(delay.count()) {
    char name[] = "/tmp/fedmetrics-api-XXXXXX";
    if (::mkdtemp(name) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = name;
    const auto certs = transport::ensure_self_signed_certificate(dir_.string(), {"localhost"}, {"127.0.0.1"});
    std::ifstream pem(certs.cert_file);
    ca_pem_.assign(std::istreambuf_iterator<char>(pem), std::istreambuf_iterator<char>());
    transport::TlsServerOptions options;
    options.bind_address = "127.0.0.1";
    options.port = 0;
    options.cert_file = certs.cert_file;
    options.key_file = certs.key_file;
    options.threads = 1;
    server_ = std::make_unique<transport::TlsServer>(
        options, [this](transport::HttpRequest request) { return handle(this, std::move(request)); });
    runner_ = std::thread([this] { server_->run(); });
  }
  ~FakeApiServer() {
    server_->stop();
    runner_.join();
    server_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  // How long a request that is not a Lease's waits for its answer.
  void set_delay(std::chrono::milliseconds delay) { delay_ms_ = delay.count(); }
  // Requests other than a Lease's received and answered so far, and Lease requests.
  [[nodiscard]] int received() const { return received_.load(); }
  [[nodiscard]] int answered() const { return answered_.load(); }
  [[nodiscard]] int lease_requests() const { return lease_requests_.load(); }

  // The holder of the Lease `name`, "" when there is none.
  [[nodiscard]] std::string lease_holder(const std::string& name) const {
    std::lock_guard lock(mutex_);
    const auto it = leases_.find(name);
    return it == leases_.end() ? "" : it->second["spec"].value("holderIdentity", "");
  }
  // Another replica takes the Lease, for an hour.
  void take_lease(const std::string& name, const std::string& holder) {
    std::lock_guard lock(mutex_);
    auto& lease = leases_[name];
    lease["metadata"]["name"] = name;
    lease["metadata"]["resourceVersion"] = std::to_string(++version_);
    lease["spec"]["holderIdentity"] = holder;
    lease["spec"]["leaseDurationSeconds"] = 3600;
  }

  [[nodiscard]] kube::ClusterEndpoint endpoint() const {
    kube::ClusterEndpoint e;
    e.name = "karmada-apiserver";
    e.server = "https://127.0.0.1:" + std::to_string(server_->port());
    e.ca_pem = ca_pem_;
    e.token = "admin-token";
    return e;
  }
  // A kubeconfig whose current context is this server (--kubeconfig).
  [[nodiscard]] std::string kubeconfig() const {
    const auto path = dir_ / "karmada.kubeconfig";
    std::ofstream out(path);
    out << "apiVersion: v1\nkind: Config\nclusters:\n- name: karmada\n  cluster:\n    server: " << endpoint().server
        << "\n    certificate-authority-data: " << k8s::base64_encode(ca_pem_)
        << "\nusers:\n- name: admin\n  user:\n    token: admin-token\n"
           "contexts:\n- name: karmada\n  context: {cluster: karmada, user: admin}\ncurrent-context: karmada\n";
    return path.string();
  }

 private:
  static transport::HttpResponse json_answer(int status, const nlohmann::json& body) {
    transport::HttpResponse r;
    r.status = status;
    r.body = body.dump();
    return r;
  }

  // A named coroutine with its server as an argument (never a capturing lambda as a coroutine).
  static async::Task<transport::HttpResponse> handle(FakeApiServer* self, transport::HttpRequest request) {
    const std::string leases = "/apis/coordination.k8s.io/v1/namespaces/";
    if (request.target.rfind(leases, 0) == 0 && request.target.find("/leases") != std::string::npos) {
      ++self->lease_requests_;
      co_return self->lease(request);
    }
    ++self->received_;
    const auto delay = std::chrono::milliseconds(self->delay_ms_.load());
    if (delay.count() > 0) co_await async::sleep_for(delay);
    ++self->answered_;
    co_return json_answer(200, nlohmann::json::object());
  }

  transport::HttpResponse lease(const transport::HttpRequest& request) {
    const auto slash = request.target.rfind('/');
    const std::string last = request.target.substr(slash + 1);
    std::lock_guard lock(mutex_);
    if (request.method == "GET") {
      const auto it = leases_.find(last);
      if (it == leases_.end()) return json_answer(404, {{"kind", "Status"}, {"code", 404}, {"reason", "NotFound"}});
      return json_answer(200, it->second);
    }
    auto lease = nlohmann::json::parse(request.body, nullptr, false);
    if (!lease.is_object()) return json_answer(400, {{"kind", "Status"}, {"code", 400}});
    const std::string name = lease["metadata"].value("name", "");
    const auto it = leases_.find(name);
    if (request.method == "POST" && it != leases_.end())
      return json_answer(409, {{"kind", "Status"}, {"code", 409}, {"reason", "AlreadyExists"}});
    const bool stale = it == leases_.end() || lease["metadata"].value("resourceVersion", "") !=
                                                  it->second["metadata"].value("resourceVersion", "");
    if (request.method == "PUT" && stale)
      return json_answer(409, {{"kind", "Status"}, {"code", 409}, {"reason", "Conflict"}});
    lease["metadata"]["resourceVersion"] = std::to_string(++version_);
    leases_[name] = lease;
    return json_answer(request.method == "POST" ? 201 : 200, lease);
  }

  std::filesystem::path dir_;
  std::string ca_pem_;
  std::atomic<long> delay_ms_;
  std::atomic<int> received_{0};
  std::atomic<int> answered_{0};
  std::atomic<int> lease_requests_{0};
  mutable std::mutex mutex_;
  std::map<std::string, nlohmann::json> leases_;  // by name (one namespace is enough here)
  long version_ = 0;
  std::unique_ptr<transport::TlsServer> server_;
  std::thread runner_;
};

}  // namespace fedmetrics::testing

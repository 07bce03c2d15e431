#pragma once
// Clients of another API of the member clusters (distributed mode's member
// HPA writers), one per member, reaching it as the metrics reads do: made
// when first asked for, made again when the member's endpoint changes (a
// rotated token, another server), and dropped when no one asked for it in
// `unused_for` (its member left the member set), so that member churn does
// not keep clients and their connections forever. Thread-safe.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "fedmetrics/kube/kubeconfig.hpp"

namespace fedmetrics::clusterclient {

template <class Client>
class MemberClientCache {
 public:
  using Clock = std::chrono::steady_clock;
  // `make(endpoint)` builds a client, or throws (unusable TLS material).
  using Make = std::function<std::shared_ptr<Client>(const kube::ClusterEndpoint&)>;

  MemberClientCache(Make make, Clock::duration unused_for) : make_(std::move(make)), unused_for_(unused_for) {}

  // The client of the member `endpoint` names (endpoint.name), made when it
  // has none or its endpoint changed; what `make` throws propagates, and the
  // member then has no client until it is asked for again.
  std::shared_ptr<Client> get(const kube::ClusterEndpoint& endpoint, Clock::time_point now) {
    std::lock_guard lock(mutex_);
    std::erase_if(clients_, [&](const auto& entry) { return now - entry.second.used > unused_for_; });
    auto it = clients_.find(endpoint.name);
    if (it == clients_.end() || !(it->second.endpoint == endpoint)) {
      if (it != clients_.end()) clients_.erase(it);
      auto client = make_(endpoint);
      it = clients_.emplace(endpoint.name, Entry{endpoint, std::move(client), now}).first;
    }
    it->second.used = now;
    return it->second.client;
  }

  [[nodiscard]] std::size_t size() const {
    std::lock_guard lock(mutex_);
    return clients_.size();
  }

 private:
  struct Entry {
    kube::ClusterEndpoint endpoint;
    std::shared_ptr<Client> client;
    Clock::time_point used;
  };
  Make make_;
  Clock::duration unused_for_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> clients_;  // by member name; guarded by mutex_
};

}  // namespace fedmetrics::clusterclient

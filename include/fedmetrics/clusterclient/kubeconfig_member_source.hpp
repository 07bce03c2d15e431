#pragma once
// The member set from --member-kubeconfig files: every context a member named
// after it. Files are re-read when they change; members whose endpoint did not
// change keep their connections and capabilities. Each member's capability
// discovery is refreshed in the background (never on the request path):
// every `discovery_interval`, and with backoff after a failure.
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/clusterclient/rest_member_cluster.hpp"

namespace fedmetrics::clusterclient {

struct KubeconfigSourceOptions {
  std::vector<std::string> kubeconfig_files;
  std::vector<std::string> only_contexts;  // --member-contexts; empty = all
  std::chrono::milliseconds discovery_interval{30'000};
  std::chrono::milliseconds discovery_timeout{5'000};
  std::chrono::milliseconds file_check_interval{1'000};
  ClientOptions client;
};

class KubeconfigMemberSource final : public aggregator::MemberSource {
 public:
  // Loads the files once; throws std::runtime_error naming the file and field
  // when one cannot be used. Starts the background refresh thread.
  KubeconfigMemberSource(ClientRuntime& runtime, KubeconfigSourceOptions options);
  ~KubeconfigMemberSource() override;

  std::shared_ptr<const aggregator::MemberList> members() const override { return snapshot_.load(); }

  // Blocks until every member has had one discovery attempt or `timeout` passed.
  void wait_for_first_discovery(std::chrono::milliseconds timeout);

 private:
  struct Member {
    std::shared_ptr<RestMemberCluster> cluster;
    std::chrono::steady_clock::time_point next_discovery{};
    std::chrono::milliseconds backoff{500};
    bool in_flight = false;
    bool attempted = false;
    std::string last_capabilities;  // for logging changes once
  };

  void load(bool initial);
  void run();
  void discover(const std::string& name);

  ClientRuntime& runtime_;
  KubeconfigSourceOptions options_;
  std::atomic<std::shared_ptr<const aggregator::MemberList>> snapshot_;
  std::map<std::filesystem::path, std::filesystem::file_time_type> file_times_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, Member> members_;  // by name; guarded by mutex_
  bool stopping_ = false;
  int discoveries_in_flight_ = 0;
  std::thread thread_;
};

}  // namespace fedmetrics::clusterclient

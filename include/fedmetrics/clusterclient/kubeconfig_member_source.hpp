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

 // Stops the background thread; no discovery starts after it returns. Call it
  // before destroying the ClientRuntime the members use.
  void stop();

 private:
  struct Member {
    std::shared_ptr<RestMemberCluster> cluster;
    std::chrono::steady_clock::time_point next_discovery{};
    std::chrono::milliseconds backoff{500};
    bool in_flight = false;
    bool attempted = false;
    std::string last_capabilities;  // for logging changes once
  };
  // What discovery callbacks touch: shared with them, so that a callback that
  // arrives after this source is gone finds valid memory (and does nothing).
  struct Shared {
    std::mutex mutex;
    std::condition_variable wake;
    std::map<std::string, Member> members;  // by name
    bool stopping = false;
  };

  void load(bool initial);
  void run();
  void discover(const std::string& name);  // with shared_->mutex held

  ClientRuntime& runtime_;
  KubeconfigSourceOptions options_;
  std::atomic<std::shared_ptr<const aggregator::MemberList>> snapshot_;
  std::map<std::filesystem::path, std::filesystem::file_time_type> file_times_;  // the refresh thread's
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  std::thread thread_;
};

}  // namespace fedmetrics::clusterclient

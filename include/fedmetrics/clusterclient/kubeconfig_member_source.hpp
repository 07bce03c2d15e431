#pragma once
// The member set from --member-kubeconfig files: every context a member named
// after it. Files are re-read when they change; members whose endpoint did not
// change keep their connections and capabilities. Holding the members and
// their background discovery is the MemberSet's job; this class only watches
// the files and feeds it their endpoints.
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fedmetrics/clusterclient/member_set.hpp"
#include "fedmetrics/transport/periodic.hpp"

namespace fedmetrics::clusterclient {

struct KubeconfigSourceOptions {
  std::vector<std::string> kubeconfig_files;
  std::vector<std::string> only_contexts;  // --member-contexts; empty = all
  std::chrono::milliseconds discovery_interval{30'000};
  std::chrono::milliseconds discovery_timeout{5'000};
  std::chrono::milliseconds file_check_interval{1'000};
  kube::ClientOptions client;
  decltype(MemberSetOptions::serve_as) serve_as;  // MemberSetOptions::serve_as
};

class KubeconfigMemberSource final : public RefreshingMemberSource {
 public:
  // Loads the files once; throws std::runtime_error naming the file and field
  // when one cannot be used. Starts the background refresh threads.
  KubeconfigMemberSource(kube::ClientRuntime& runtime, KubeconfigSourceOptions options);
  ~KubeconfigMemberSource() override;

  std::shared_ptr<const aggregator::MemberList> members() const override { return members_.members(); }
  // With the contexts whose endpoint the client cannot use.
  std::shared_ptr<const aggregator::MemberSnapshot> snapshot() const override { return members_.snapshot(); }

  // Blocks until every member has had one discovery attempt or `timeout` passed.
  void wait_for_first_discovery(std::chrono::milliseconds timeout) override;
  [[nodiscard]] const MemberSet& member_set() const override { return members_; }

  // Stops the background threads; no discovery starts after it returns. Call
  // it before destroying the ClientRuntime the members use.
  void stop() override;

 private:
  void load(bool initial);
  void check_files();  // on the file watcher's thread

  KubeconfigSourceOptions options_;
  MemberSet members_;
  std::map<std::filesystem::path, std::filesystem::file_time_type> file_times_;  // the file watcher's
  async::Periodic file_watcher_;  // last: started once the rest is in place
};

}  // namespace fedmetrics::clusterclient

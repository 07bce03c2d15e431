#pragma once
// controller::MemberPods with one reflector per member and namespace in use
// (client-go's pod informer, which upstream's HPA controller reads): the
// namespace's pods listed, then watched; a watch the member ends is resumed,
// one that expired (410 Gone) or broke is followed by a fresh list, so the
// cache neither loses nor repeats a pod (kube/reflector.hpp). Each holds at
// most `max_pods` pods (k8s::PodCache); a namespace with more is refused
// with an error that says so, and its pods are then missing to the syncs.
//
// A watch starts when a sync first asks for its member and namespace, and a
// sync waits for its first list for at most `first_list_timeout` (later
// syncs do not wait again: a member that cannot be listed has its pods
// missing until it can). keep() stops the watches no longer needed and not
// read since the keep() before it (a sync in flight may read one its owner
// has not counted yet), without waiting for them; stop() (and the
// destructor) stops every one and returns once none runs.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "fedmetrics/controller/member_pods.hpp"
#include "fedmetrics/kube/reflector.hpp"
#include "fedmetrics/transport/executor.hpp"

namespace fedmetrics::kubeclient {

struct WatchedMemberPodsOptions {
  std::size_t max_pods = 100'000;  // per member and namespace
  std::chrono::milliseconds request_timeout{10'000};
  std::chrono::milliseconds first_list_timeout{3'000};
  // The time the reflectors' backoff and the first-list wait run on (kube::ReflectorOptions).
  std::function<std::chrono::steady_clock::time_point()> now;
  std::function<async::Task<bool>(std::chrono::steady_clock::duration)> sleep_for;
};

struct WatchedMemberPodsStats {
  std::size_t watches = 0;  // running now
  std::size_t pods = 0;     // held by them
  std::uint64_t started = 0;
  std::uint64_t stopped = 0;
  kube::ReflectorStats requests;  // the running watches' lists, watches, events and relists
};

class WatchedMemberPods final : public controller::MemberPods {
 public:
  // The server of `member`'s watches (a client of its own, reaching it as
  // the metrics reads do), or null when it cannot be reached now.
  using Connect = std::function<std::shared_ptr<kube::ListWatch>(const std::string& member)>;

  WatchedMemberPods(async::Executor executor, Connect connect, WatchedMemberPodsOptions options = {});
  ~WatchedMemberPods() override;
  WatchedMemberPods(const WatchedMemberPods&) = delete;
  WatchedMemberPods& operator=(const WatchedMemberPods&) = delete;

  async::Task<k8s::Expected<std::vector<k8s::Pod>>> pods(const aggregator::MemberCluster& member,
                                                         const std::string& namespace_name,
                                                         const k8s::LabelSelector& selector,
                                                         aggregator::Deadline deadline) override;
  void keep(const std::set<controller::MemberNamespace>& in_use) override;
  // Stops every watch; returns once none runs. Not from a thread of the runtime.
  void stop();

  [[nodiscard]] WatchedMemberPodsStats stats() const;

  struct Watch;

 private:
  std::shared_ptr<Watch> watch_of(const controller::MemberNamespace& which);

  async::Executor executor_;
  Connect connect_;
  WatchedMemberPodsOptions options_;
  mutable std::mutex mutex_;
  std::map<controller::MemberNamespace, std::shared_ptr<Watch>> watches_;  // guarded by mutex_
  std::uint64_t started_ = 0, stopped_ = 0;                                // guarded by mutex_
  bool stopped_all_ = false;                                               // guarded by mutex_
  std::shared_ptr<void> running_;  // how many watch coroutines have not ended (the .cpp's type)
};

}  // namespace fedmetrics::kubeclient

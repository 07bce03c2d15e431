#include "fedmetrics/kubeclient/watched_member_pods.hpp"

#include "fedmetrics/transport/async.hpp"

#include <atomic>
#include <condition_variable>
#include <optional>

#include "fedmetrics/k8s/pod_cache.hpp"

namespace fedmetrics::kubeclient {

namespace asio = boost::asio;

namespace {

// How many watches run, for stop() to wait on (their coroutines may end after a keep() forgot them).
struct Running {
  std::mutex mutex;
  std::condition_variable cv;
  std::size_t count = 0;
};

// The first list's wait ends by this time even when the list does not come.
async::Task<void> expire(async::OneShot<bool> first_list,
                         std::function<async::Task<bool>(std::chrono::steady_clock::duration)> sleep_for,
                         std::chrono::milliseconds timeout) {
  auto sleeping = sleep_for(timeout);
  co_await std::move(sleeping);
  first_list.set(false);
}

}  // namespace

struct WatchedMemberPods::Watch {
  explicit Watch(async::Strand s) : strand(std::move(s)) {}
  async::Strand strand;
  std::shared_ptr<k8s::PodCache> cache;
  std::unique_ptr<kube::Reflector> reflector;
  asio::cancellation_signal signal;  // emitted on `strand`
  async::OneShot<bool> first_list;   // true once listed; false when not by the first-list timeout
  std::shared_ptr<Running> running;
  std::atomic<bool> read{true};  // since the last keep(): a sync in flight may still need it

  void cancel(const std::shared_ptr<Watch>& self) {
    asio::post(strand, [self] { self->signal.emit(asio::cancellation_type::terminal); });
  }

  static async::Task<void> run(std::shared_ptr<Watch> self) {
    auto running = self->reflector->run();
    co_await std::move(running);
  }
};

namespace {
std::shared_ptr<Running> running_of(const std::shared_ptr<void>& holder) {
  return std::static_pointer_cast<Running>(holder);
}
}  // namespace

WatchedMemberPods::WatchedMemberPods(async::Executor executor, Connect connect, WatchedMemberPodsOptions options)
    : executor_(std::move(executor)), connect_(std::move(connect)), options_(std::move(options)) {
  if (!options_.sleep_for) options_.sleep_for = [](auto duration) { return async::sleep_for(duration); };
  running_ = std::make_shared<Running>();
}

WatchedMemberPods::~WatchedMemberPods() { stop(); }

std::shared_ptr<WatchedMemberPods::Watch> WatchedMemberPods::watch_of(const controller::MemberNamespace& which) {
  std::lock_guard lock(mutex_);
  if (auto it = watches_.find(which); it != watches_.end()) return it->second;
  if (stopped_all_) return nullptr;
  auto server = connect_(which.first);
  if (!server) return nullptr;
  auto watch = std::make_shared<Watch>(async::make_strand(executor_));
  watch->cache = std::make_shared<k8s::PodCache>(options_.max_pods);
  watch->running = running_of(running_);
  kube::ReflectorOptions reflecting;
  reflecting.what = "autoscaler: pods of namespace " + which.second + " in " + which.first;
  reflecting.collection = kube::ResourcePath::core("pods", which.second);
  reflecting.request_timeout = options_.request_timeout;
  reflecting.now = options_.now;
  reflecting.sleep_for = options_.sleep_for;
  watch->reflector = std::make_unique<kube::Reflector>(std::move(server), std::move(reflecting), watch->cache,
                                                       [first = watch->first_list](const kube::ReflectorChange& c) {
                                                         if (c.listed) first.set(true);
                                                       });
  {
    std::lock_guard count(watch->running->mutex);
    ++watch->running->count;
  }
  asio::co_spawn(watch->strand, Watch::run(watch),
                 asio::bind_cancellation_slot(watch->signal.slot(), [running = watch->running](std::exception_ptr) {
                   std::lock_guard count(running->mutex);
                   --running->count;
                   running->cv.notify_all();
                 }));
  asio::co_spawn(watch->strand, expire(watch->first_list, options_.sleep_for, options_.first_list_timeout),
                 [](const std::exception_ptr&) {});
  ++started_;
  watches_.emplace(which, watch);
  return watch;
}

async::Task<k8s::Expected<std::vector<k8s::Pod>>> WatchedMemberPods::pods(const aggregator::MemberCluster& member,
                                                                          const std::string& namespace_name,
                                                                          const k8s::LabelSelector& selector,
                                                                          aggregator::Deadline /*deadline*/) {
  // Copies: nothing of the caller's is read after the first suspension.
  const std::string where = "pods of namespace " + namespace_name;
  const k8s::LabelSelector labels = selector;
  auto watch = watch_of({member.name(), namespace_name});
  if (!watch) co_return k8s::Error{k8s::ErrorKind::LeftOut, where + ": no client to watch them with"};
  watch->read = true;
  if (!watch->reflector->synced()) {
    auto waiting = watch->first_list.wait();
    const bool listed = co_await std::move(waiting);
    (void)listed;  // read below either way
  }
  const bool synced = watch->reflector->synced();
  std::optional<k8s::Error> refused;
  std::vector<k8s::Pod> out;
  watch->reflector->read([&] {
    if (watch->cache->over_bound()) refused = *watch->cache->over_bound();
    else if (synced) out = watch->cache->select(labels);
  });
  if (refused) co_return refused->at(where);
  if (!synced) {
    const std::string why = watch->reflector->last_failure();
    co_return k8s::Error{k8s::ErrorKind::Timeout, where + ": not listed yet" + (why.empty() ? "" : ": " + why)};
  }
  co_return out;
}

void WatchedMemberPods::keep(const std::set<controller::MemberNamespace>& in_use) {
  std::lock_guard lock(mutex_);
  for (auto it = watches_.begin(); it != watches_.end();) {
    // A watch read since the last keep() stays until the next one: the sync
    // that read it may not have told its owner yet.
    const bool read = it->second->read.exchange(false);
    if (in_use.count(it->first) || read) {
      ++it;
      continue;
    }
    it->second->cancel(it->second);
    ++stopped_;
    it = watches_.erase(it);
  }
}

void WatchedMemberPods::stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_all_ = true;
    for (auto& [which, watch] : watches_) {
      watch->cancel(watch);
      ++stopped_;
    }
    watches_.clear();
  }
  auto running = running_of(running_);
  std::unique_lock lock(running->mutex);
  running->cv.wait(lock, [&] { return running->count == 0; });
}

WatchedMemberPodsStats WatchedMemberPods::stats() const {
  WatchedMemberPodsStats out;
  std::lock_guard lock(mutex_);
  out.watches = watches_.size();
  out.started = started_;
  out.stopped = stopped_;
  for (const auto& [which, watch] : watches_) {
    watch->reflector->read([&] { out.pods += watch->cache->size(); });
    const auto s = watch->reflector->stats();
    out.requests.lists += s.lists;
    out.requests.watches += s.watches;
    out.requests.events += s.events;
    out.requests.expired += s.expired;
    out.requests.failures += s.failures;
  }
  return out;
}

}  // namespace fedmetrics::kubeclient

#include "fedmetrics/kube/reflector.hpp"

#include "fedmetrics/transport/async.hpp"

#include <mutex>

#include <spdlog/spdlog.h>

#include "fedmetrics/k8s/object_cache.hpp"

namespace fedmetrics::kube {

using nlohmann::json;

namespace {

// HttpsClient's requests, as the reflector asks them.
class ClientListWatch final : public ListWatch {
 public:
  explicit ClientListWatch(std::shared_ptr<HttpsClient> client) : client_(std::move(client)) {}
  async::Task<HttpResult> list(std::string target, Deadline deadline) override {
    OutgoingRequest get;
    get.target = std::move(target);
    return client_->request(std::move(get), deadline);
  }
  async::Task<HttpResult> watch(std::string target, Deadline header_deadline, std::chrono::milliseconds idle_timeout,
                                std::function<bool(std::string)> on_line) override {
    return client_->watch_lines(std::move(target), header_deadline, idle_timeout, std::move(on_line));
  }

 private:
  std::shared_ptr<HttpsClient> client_;
};

// What the run does next: list or watch, after `wait`.
struct Next {
  bool relist = false;
  std::chrono::milliseconds wait{0};
};

}  // namespace

std::shared_ptr<ListWatch> list_watch(std::shared_ptr<HttpsClient> client) {
  return std::make_shared<ClientListWatch>(std::move(client));
}

struct Reflector::State {
  std::shared_ptr<ListWatch> server;
  ReflectorOptions options;
  OnChange on_change;

  // What readers on other threads see.
  mutable std::mutex mutex;
  std::shared_ptr<k8s::WatchCache> store;
  k8s::ObjectCache* objects = nullptr;  // the store, when it is the JSON one
  bool synced = false;
  ReflectorStats stats;
  std::string failure;  // last_failure, for readers

  // The run's own: its coroutine, and the watch's lines while it awaits them.
  static constexpr std::chrono::seconds kBackoffReset{120};
  std::chrono::milliseconds backoff{0};
  std::chrono::steady_clock::time_point last_failure_at{};
  std::string last_failure;
  bool failed_listing = false;    // the last failure was a list's
  bool relist_requested = false;  // by an event of the current stream
  std::string broken_stream;      // why, when that event was not a 410 (a list then waits for the backoff)
  std::chrono::steady_clock::time_point watch_started{};
  std::uint64_t watch_events = 0;  // of the current watch

  std::string query(bool watch) const {
    ResourcePath path = options.collection;
    if (watch) {
      std::lock_guard lock(mutex);
      path.with("watch", "true")
          .with("allowWatchBookmarks", "true")
          .with("resourceVersion", store->resource_version())
          .with("timeoutSeconds", std::to_string(options.watch_timeout.count()));
    }
    return path.target();
  }

  void notify(const ReflectorChange& change) {
    if (on_change) on_change(change);
  }

  // A failure: the wait before the retry, a backoff that doubles from
  // min_backoff to max_backoff and starts again only after a quiet spell
  // (client-go's backoff manager), so that a server that lists but refuses
  // to watch (RBAC without "watch") is not asked twice a second forever.
  // Logged when the reason changes.
  std::chrono::milliseconds failed(const std::string& why, bool relist) {
    std::size_t known = 0;
    {
      std::lock_guard lock(mutex);
      ++stats.failures;
      known = store->size();
      failure = why;
    }
    const auto now = options.now();
    if (now - last_failure_at > kBackoffReset) backoff = std::chrono::milliseconds(0);
    last_failure_at = now;
    backoff = backoff.count() == 0 ? options.min_backoff : std::min(backoff * 2, options.max_backoff);
    if (why != last_failure)
      spdlog::warn("{}: {}; keeping the {} object(s) known, retrying in {} ms (backing off up to {} ms)", options.what,
                   why, known, backoff.count(), options.max_backoff.count());
    last_failure = why;
    failed_listing = relist && why.rfind("cannot list", 0) == 0;
    return backoff;
  }

  // Working again: a list after failed lists, or a watch that delivered.
  void recovered() {
    if (!last_failure.empty()) spdlog::info("{}: listing and watching again", options.what);
    last_failure.clear();
    std::lock_guard lock(mutex);
    failure.clear();
    failed_listing = false;
  }

  Next listed(const HttpResult& result) {
    const auto* reply = std::get_if<HttpReply>(&result);
    if (reply == nullptr || reply->status != 200) return {true, failed("cannot list: " + describe(result), true)};
    ReflectorChange change;
    change.listed = true;
    std::string malformed;
    {
      std::lock_guard lock(mutex);
      auto added = store->replace(reply->body);
      if (added) {
        ++stats.lists;
        change.first = !synced;
        if (objects != nullptr)
          for (const auto& key : *added) change.added.push_back(*objects->find(key));
        synced = true;
      } else {
        malformed = added.error().message;
      }
    }
    // Not a List: the server (or what stands in front of it) is broken; keep what we have.
    if (!malformed.empty()) return {true, failed("cannot list: " + malformed, true)};
    if (failed_listing) recovered();  // (after a failed watch, only a watch that works says so)
    notify(change);
    return {false, std::chrono::milliseconds(0)};
  }

  // One line of the watch; false ends the stream (a list must follow).
  bool event(const std::string& line) {
    using Kind = k8s::WatchCache::EventOutcome::Kind;
    if (relist_requested) return false;  // the rest of this stream is moot
    if (watch_events++ == 0 && !last_failure.empty()) recovered();
    ReflectorChange change;
    {
      std::lock_guard lock(mutex);
      auto outcome = store->apply(line);
      switch (outcome.kind) {
        case Kind::Added:
          ++stats.events;
          if (objects != nullptr) change.added.push_back(*objects->find(outcome.key));
          break;
        case Kind::Modified:
          ++stats.events;
          if (objects != nullptr) change.modified.push_back(*objects->find(outcome.key));
          break;
        case Kind::Deleted: ++stats.events; break;
        case Kind::Bookmark: ++stats.events; return true;
        case Kind::Expired: ++stats.expired; [[fallthrough]];
        case Kind::Failed:
          // Expired: resuming is impossible. Failed: the stream cannot be
          // trusted past this point. Either way, list again.
          relist_requested = true;
          if (outcome.kind == Kind::Failed) broken_stream = outcome.message;
          return false;
      }
    }
    notify(change);
    return true;
  }

  Next watch_ended(const HttpResult& end) {
    if (relist_requested && !broken_stream.empty())
      return {true, failed("the watch stream broke: " + broken_stream, true)};
    // 410: the resourceVersion is too old to resume from. A list, after a
    // short pause (as client-go), not at once: a server that keeps answering
    // 410 is not hammered.
    if (relist_requested) return {true, options.min_backoff};
    const auto* reply = std::get_if<HttpReply>(&end);
    if (reply != nullptr && reply->status == 200) {
      // The server's timeoutSeconds: resume from the last resourceVersion. A
      // watch that ended at once without an event (a proxy closing it) is a
      // failure, retried with the backoff rather than in a tight loop.
      if (watch_events == 0 && options.now() - watch_started < std::chrono::milliseconds(500))
        return {false, failed("the watch ended at once without an event", false)};
      recovered();
      return {false, std::chrono::milliseconds(0)};
    }
    if (reply != nullptr && reply->status == 410) {
      {
        std::lock_guard lock(mutex);
        ++stats.expired;
      }
      return {true, options.min_backoff};
    }
    return {true, failed("the watch ended: " + describe(end), true)};
  }

  // The coroutines take the state by reference: the Reflector outlives its run.
  static async::Task<Next> list(State& self) {
    auto listing =
        self.server->list(self.query(false), std::chrono::steady_clock::now() + self.options.request_timeout);
    auto result = co_await std::move(listing);
    co_await async::throw_if_cancelled();  // stopped: nothing more to apply
    co_return self.listed(result);
  }

  static async::Task<Next> watch(State& self) {
    {
      std::lock_guard lock(self.mutex);
      ++self.stats.watches;
    }
    self.relist_requested = false;
    self.broken_stream.clear();
    self.watch_started = self.options.now();
    self.watch_events = 0;
    auto watching =
        self.server->watch(self.query(true), std::chrono::steady_clock::now() + self.options.request_timeout,
                           self.options.watch_timeout + self.options.request_timeout,
                           [&self](std::string line) { return self.event(line); });
    auto end = co_await std::move(watching);
    co_await async::throw_if_cancelled();
    co_return self.watch_ended(end);
  }
};

Reflector::Reflector(std::shared_ptr<ListWatch> server, ReflectorOptions options, OnChange on_change)
    : Reflector(std::move(server), std::move(options), std::make_shared<k8s::ObjectCache>(), std::move(on_change)) {
  state_->objects = static_cast<k8s::ObjectCache*>(state_->store.get());
}

Reflector::Reflector(std::shared_ptr<ListWatch> server, ReflectorOptions options,
                     std::shared_ptr<k8s::WatchCache> store, OnChange on_change)
    : state_(std::make_unique<State>()) {
  state_->store = std::move(store);
  state_->server = std::move(server);
  state_->options = std::move(options);
  state_->on_change = std::move(on_change);
  if (!state_->options.now) state_->options.now = [] { return std::chrono::steady_clock::now(); };
  if (!state_->options.sleep_for) state_->options.sleep_for = [](auto duration) { return async::sleep_for(duration); };
}

Reflector::~Reflector() { stop(); }

async::Task<void> Reflector::run() {
  State& self = *state_;
  Next next{true, std::chrono::milliseconds(0)};
  for (;;) {
    if (next.wait.count() > 0) {
      auto pause = self.options.sleep_for(next.wait);
      const bool slept = co_await std::move(pause);
      (void)slept;  // a cancelled sleep: the check below ends the run
    }
    co_await async::throw_if_cancelled();
    if (next.relist) {
      auto listing = State::list(self);
      next = co_await std::move(listing);
    } else {
      auto watching = State::watch(self);
      next = co_await std::move(watching);
    }
  }
}

void Reflector::start(const async::Executor& executor) {
  job_ = std::make_unique<async::Job>();
  job_->start(async::make_strand(executor), state_->options.what + ": the reflector", [this] { return run(); });
}

void Reflector::stop() {
  if (job_) job_->stop();
}

bool Reflector::synced() const {
  std::lock_guard lock(state_->mutex);
  return state_->synced;
}

std::vector<json> Reflector::items() const {
  std::lock_guard lock(state_->mutex);
  return state_->objects != nullptr ? state_->objects->items() : std::vector<json>{};
}

void Reflector::read(const std::function<void()>& read) const {
  std::lock_guard lock(state_->mutex);
  read();
}

std::string Reflector::last_failure() const {
  std::lock_guard lock(state_->mutex);
  return state_->failure;
}

ReflectorStats Reflector::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

}  // namespace fedmetrics::kube

#include "fedmetrics/kube/reflector.hpp"

#include <condition_variable>
#include <mutex>

#include <spdlog/spdlog.h>

#include "fedmetrics/k8s/object_cache.hpp"

namespace fedmetrics::kube {

using nlohmann::json;

struct Reflector::State : std::enable_shared_from_this<Reflector::State> {
  std::shared_ptr<HttpsClient> client;
  ReflectorOptions options;
  OnChange on_change;

  mutable std::mutex mutex;
  std::condition_variable idle;  // a callback finished (stop() waits for it)
  bool stopped = false;
  int callbacks_running = 0;
  k8s::ObjectCache cache;
  bool synced = false;
  std::shared_ptr<LineStream> stream;
  bool relist_requested = false;  // by an event of the current stream
  std::string broken_stream;      // why, when that event was not a 410 (a list then waits for the backoff)
  static constexpr std::chrono::seconds kBackoffReset{120};
  std::chrono::milliseconds backoff{0};
  std::chrono::steady_clock::time_point last_failure_at{};
  std::string last_failure;
  bool failed_listing = false;  // the last failure was a list's
  std::chrono::steady_clock::time_point watch_started{};
  std::uint64_t watch_events = 0;  // of the current watch
  ReflectorStats stats;

  std::string query(bool watch) const {
    ResourcePath path = options.collection;
    if (watch)
      path.with("watch", "true")
          .with("allowWatchBookmarks", "true")
          .with("resourceVersion", cache.resource_version())
          .with("timeoutSeconds", std::to_string(options.watch_timeout.count()));
    return path.target();
  }

  // Runs `body` unless stopped; stop() waits until it has returned.
  template <class F>
  void guarded(F&& body) {
    {
      std::lock_guard lock(mutex);
      if (stopped) return;
      ++callbacks_running;
    }
    body();
    std::lock_guard lock(mutex);
    --callbacks_running;
    idle.notify_all();
  }

  void notify(const ReflectorChange& change) {
    if (on_change) on_change(change);
  }

  // A failure: retried after a backoff that doubles from min_backoff to
  // max_backoff and starts again only after a quiet spell (client-go's
  // backoff manager), so that a server that lists but refuses to watch (RBAC
  // without "watch") is not asked twice a second forever. Logged when the
  // reason changes.
  void failed(const std::string& why, bool relist) {
    std::chrono::milliseconds wait;
    {
      std::lock_guard lock(mutex);
      ++stats.failures;
      const auto now = std::chrono::steady_clock::now();
      if (now - last_failure_at > kBackoffReset) backoff = std::chrono::milliseconds(0);
      last_failure_at = now;
      backoff = backoff.count() == 0 ? options.min_backoff : std::min(backoff * 2, options.max_backoff);
      wait = backoff;
      if (why != last_failure)
        spdlog::warn("{}: {}; keeping the {} object(s) known, retrying in {} ms (backing off up to {} ms)",
                     options.what, why, cache.size(), wait.count(), options.max_backoff.count());
      last_failure = why;
      failed_listing = relist && why.rfind("cannot list", 0) == 0;
    }
    retry_after(wait, relist);
  }

  void retry_after(std::chrono::milliseconds wait, bool relist) {
    auto self = shared_from_this();
    client->schedule(wait, [self, relist] { self->guarded([&] { relist ? self->list() : self->watch(); }); });
  }

  // Working again: a list after failed lists, or a watch that delivered.
  void recovered() {
    std::lock_guard lock(mutex);
    if (!last_failure.empty()) spdlog::info("{}: listing and watching again", options.what);
    last_failure.clear();
    failed_listing = false;
  }

  void list() {
    auto self = shared_from_this();
    client->get(query(false), std::chrono::steady_clock::now() + options.request_timeout,
                [self](HttpResult result) { self->guarded([&] { self->listed(std::move(result)); }); });
  }

  void listed(HttpResult result) {
    const auto* reply = std::get_if<HttpReply>(&result);
    if (reply == nullptr || reply->status != 200) return failed("cannot list: " + describe(result), true);
    ReflectorChange change;
    change.listed = true;
    std::string malformed;
    {
      std::lock_guard lock(mutex);
      auto added = cache.replace(reply->body);
      if (added) {
        ++stats.lists;
        change.first = !synced;
        for (const auto& key : *added) change.added.push_back(*cache.find(key));
        synced = true;
      } else {
        malformed = added.error().message;
      }
    }
    // Not a List: the server (or what stands in front of it) is broken; keep what we have.
    if (!malformed.empty()) return failed("cannot list: " + malformed, true);
    bool lists_failed = false;
    {
      std::lock_guard lock(mutex);
      lists_failed = failed_listing;
    }
    if (lists_failed) recovered();  // (after a failed watch, only a watch that works says so)
    notify(change);
    watch();
  }

  void watch() {
    auto self = shared_from_this();
    LineStreamCallbacks callbacks;
    callbacks.on_line = [self](std::string line) { self->guarded([&] { self->event(line); }); };
    callbacks.on_end = [self](HttpResult end) { self->guarded([&] { self->watch_ended(std::move(end)); }); };
    std::string path;
    {
      std::lock_guard lock(mutex);
      ++stats.watches;
      relist_requested = false;
      broken_stream.clear();
      watch_started = std::chrono::steady_clock::now();
      watch_events = 0;
      path = query(true);
    }
    auto stream_handle = client->stream_lines(path, std::chrono::steady_clock::now() + options.request_timeout,
                                              options.watch_timeout + options.request_timeout, std::move(callbacks));
    std::lock_guard lock(mutex);
    stream = std::move(stream_handle);
    if (stopped) stream->cancel();
  }

  void event(const std::string& line) {
    using Kind = k8s::ObjectCache::EventOutcome::Kind;
    ReflectorChange change;
    bool first_event = false;
    {
      std::lock_guard lock(mutex);
      if (relist_requested) return;  // the rest of this stream is moot
      first_event = watch_events++ == 0 && !last_failure.empty();
    }
    if (first_event) recovered();
    {
      std::lock_guard lock(mutex);
      auto outcome = cache.apply(line);
      switch (outcome.kind) {
        case Kind::Added:
          ++stats.events;
          change.added.push_back(*cache.find(outcome.key));
          break;
        case Kind::Modified:
          ++stats.events;
          change.modified.push_back(*cache.find(outcome.key));
          break;
        case Kind::Deleted: ++stats.events; break;
        case Kind::Bookmark: ++stats.events; return;
        case Kind::Expired: ++stats.expired; [[fallthrough]];
        case Kind::Failed:
          // Expired: resuming is impossible. Failed: the stream cannot be
          // trusted past this point. Either way, list again.
          relist_requested = true;
          if (outcome.kind == Kind::Failed) broken_stream = outcome.message;
          if (stream) stream->cancel();
          return;
      }
    }
    notify(change);
  }

  void watch_ended(HttpResult end) {
    bool relist = false;
    std::string broken;
    bool short_and_empty = false;
    {
      std::lock_guard lock(mutex);
      stream.reset();
      relist = relist_requested;
      broken = broken_stream;
      short_and_empty =
          watch_events == 0 && std::chrono::steady_clock::now() - watch_started < std::chrono::milliseconds(500);
    }
    if (relist && !broken.empty()) return failed("the watch stream broke: " + broken, true);
    // 410: the resourceVersion is too old to resume from. A list, after a
    // short pause (as client-go), not at once: a server that keeps answering
    // 410 is not hammered.
    if (relist) return retry_after(options.min_backoff, true);
    const auto* reply = std::get_if<HttpReply>(&end);
    if (reply != nullptr && reply->status == 200) {
      // The server's timeoutSeconds: resume from the last resourceVersion. A
      // watch that ended at once without an event (a proxy closing it) is a
      // failure, retried with the backoff rather than in a tight loop.
      if (short_and_empty) return failed("the watch ended at once without an event", false);
      recovered();
      return watch();
    }
    if (reply != nullptr && reply->status == 410) {
      {
        std::lock_guard lock(mutex);
        ++stats.expired;
      }
      return retry_after(options.min_backoff, true);
    }
    failed("the watch ended: " + describe(end), true);
  }
};

Reflector::Reflector(std::shared_ptr<HttpsClient> client, ReflectorOptions options, OnChange on_change)
    : state_(std::make_shared<State>()) {
  state_->client = std::move(client);
  state_->options = std::move(options);
  state_->on_change = std::move(on_change);
}

Reflector::~Reflector() { stop(); }

void Reflector::start() {
  state_->guarded([this] { state_->list(); });
}

void Reflector::stop() {
  std::unique_lock lock(state_->mutex);
  state_->stopped = true;
  if (auto stream = std::exchange(state_->stream, nullptr)) stream->cancel();
  state_->idle.wait(lock, [this] { return state_->callbacks_running == 0; });
}

bool Reflector::synced() const {
  std::lock_guard lock(state_->mutex);
  return state_->synced;
}

std::vector<json> Reflector::items() const {
  std::lock_guard lock(state_->mutex);
  return state_->cache.items();
}

ReflectorStats Reflector::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

}  // namespace fedmetrics::kube

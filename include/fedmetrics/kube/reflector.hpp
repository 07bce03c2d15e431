#pragma once
// Keeps an up-to-date copy of one collection of a Kubernetes API server, the
// way client-go's Reflector does: list it, then watch from the list's
// resourceVersion and apply each event as it arrives. A watch that the
// server ends normally (its timeoutSeconds) is resumed from the last
// resourceVersion seen; one that expired (410) is followed by a fresh list
// after a short pause, one that failed after an exponential backoff (reset
// after two quiet minutes, as client-go's). The
// copy is never dropped on a failure: readers keep the last good state.
//
// The rules for applying events are k8s::WatchCache's (pure); this class
// adds the requests and the retry schedule, as one coroutine (run()) that
// its owner runs as a job and cancels to stop it. What it keeps of each
// object is its store's: the JSON (k8s::ObjectCache) unless its owner gives
// a store of its own (k8s::PodCache: the pods the autoscaler reads).
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/object_cache.hpp"
#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/kube/resource_path.hpp"
#include "fedmetrics/transport/executor.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::kube {

// What a reflector asks of the server: HttpsClient's GET and watch_lines
// (list_watch() below), or a test's fake (test/support).
class ListWatch {
 public:
  virtual ~ListWatch() = default;
  virtual async::Task<HttpResult> list(std::string target, Deadline deadline) = 0;
  // As HttpsClient::watch_lines.
  virtual async::Task<HttpResult> watch(std::string target, Deadline header_deadline,
                                        std::chrono::milliseconds idle_timeout,
                                        std::function<bool(std::string line)> on_line) = 0;
};
std::shared_ptr<ListWatch> list_watch(std::shared_ptr<HttpsClient> client);

struct ReflectorOptions {
  std::string what;  // "Cluster objects": for the log
  // What to list and watch ("/apis/cluster.karmada.io/v1alpha1/clusters"),
  // with its query (a labelSelector) on both the list and the watch.
  ResourcePath collection;
  std::chrono::milliseconds request_timeout{10'000};  // the list, and the watch's response header
  // Asked of the server as timeoutSeconds; a watch silent for longer than
  // this plus request_timeout is taken as dead (a half-open connection).
  std::chrono::seconds watch_timeout{300};
  std::chrono::milliseconds min_backoff{500};
  std::chrono::milliseconds max_backoff{30'000};
  // The time the backoff is measured and waited on: the steady clock and a
  // timer when empty; a test's fake clock. sleep_for ends false when its
  // coroutine is cancelled.
  std::function<std::chrono::steady_clock::time_point()> now;
  std::function<async::Task<bool>(std::chrono::steady_clock::duration)> sleep_for;
};

struct ReflectorChange {
  bool listed = false;  // the whole collection was (re)listed
  bool first = false;   // the first successful list
  // With the JSON store only (a store of its own says only that something changed):
  std::vector<nlohmann::json> added;     // objects with a key not held before (every object on the first list)
  std::vector<nlohmann::json> modified;  // objects a watch event changed (MODIFIED), as they are now
};

struct ReflectorStats {
  std::uint64_t lists = 0;     // successful lists
  std::uint64_t watches = 0;   // watch requests started
  std::uint64_t events = 0;    // events applied (bookmarks included)
  std::uint64_t expired = 0;   // 410 answers that forced a list
  std::uint64_t failures = 0;  // failed lists and watches
};

class Reflector {
 public:
  // Called after each change: after a list on the reflector's strand, after
  // an event on the client's (never two at once).
  using OnChange = std::function<void(const ReflectorChange&)>;
  Reflector(std::shared_ptr<ListWatch> server, ReflectorOptions options, OnChange on_change);
  // Keeping the objects in `store` (which then belongs to the reflector:
  // read it through read() only).
  Reflector(std::shared_ptr<ListWatch> server, ReflectorOptions options, std::shared_ptr<k8s::WatchCache> store,
            OnChange on_change);
  Reflector(std::shared_ptr<HttpsClient> client, ReflectorOptions options, OnChange on_change)
      : Reflector(list_watch(std::move(client)), std::move(options), std::move(on_change)) {}
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Lists, watches and lists again until the awaiting coroutine is
  // cancelled (then throws the cancellation). Once; this object outlives it.
  async::Task<void> run();
  // run() as a job on a strand of `executor`, stopped by stop() or the destructor.
  void start(const async::Executor& executor);
  // Cancels run() and returns once it has ended: no callback runs after it.
  // Not from one of its own callbacks.
  void stop();

  // Whether a list has succeeded yet; before that items() is empty and means nothing.
  [[nodiscard]] bool synced() const;
  // Every object, ordered by namespace/name (the JSON store only; empty with a store of its own).
  [[nodiscard]] std::vector<nlohmann::json> items() const;
  // Runs `read` under the lock the store is changed under: a reader of a
  // store of its own sees it whole, between two events.
  void read(const std::function<void()>& read) const;
  // Why the last list or watch failed, while it is not working again; empty otherwise.
  [[nodiscard]] std::string last_failure() const;
  [[nodiscard]] ReflectorStats stats() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
  std::unique_ptr<async::Job> job_;
};

}  // namespace fedmetrics::kube

#pragma once
// One runtime per process: the clients' io_context and its threads, the
// termination signals, and the order in which the process's components
// start and stop, written down here and nowhere else.
//
// Start order (Stage, each stage's components in the order they are given):
//   the runtime itself (its threads; the signals are blocked before any
//   thread starts), then clients, discovery, server, loops.
// Stop order: the reverse, each component once, then the runtime's threads
// are joined. So:
//   1. loops: the autoscaler first (it releases its Lease at once, so that
//      another replica takes over while this one drains), the certificate
//      and trust reloaders, the memory release;
//   2. server: after --shutdown-delay-duration it stops accepting, drains
//      the requests in flight (they are still answered: the clients still
//      run) and stops its workers;
//   3. discovery: the member sources and their discovery loops;
//   4. clients: what the client threads still hold;
//   5. the client threads are joined: no handler of theirs runs afterwards.
// A component whose start throws is not owed a stop and the exception
// propagates; the owner's stop() (or the destructor, on the way out) stops
// the ones started before it: a process that cannot come up leaves nothing
// running.
//
// No Asio here: the io_context is only named, for the kube clients.
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fedmetrics/transport/executor.hpp"

namespace boost::asio {
class io_context;
}

namespace fedmetrics::transport {

enum class Stage { clients, discovery, server, loops };
const char* to_string(Stage stage);

struct RuntimeOptions {
  unsigned threads = 1;  // the clients' I/O threads (the loops' coroutines run there too)
  // SIGTERM and SIGINT are received by the runtime (wait() returns) instead of
  // ending the process; from then on a second one ends it at once with status
  // 1 (kube-apiserver's "second signal: exit directly"), for an operator
  // whose graceful termination takes too long. Construct such a runtime
  // before any other thread starts: the signals are blocked in the
  // constructing thread and every thread started later.
  bool termination_signals = false;
};

// Why wait() returned.
struct StopCause {
  int signal = 0;       // SIGTERM or SIGINT, or 0 when asked by request_stop()
  std::string failure;  // request_stop()'s reason: start-up failed (empty: a normal stop)
};

class Runtime {
 public:
  explicit Runtime(RuntimeOptions options = {});
  // stop(): also on the error paths that leave the owner's scope early.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Where the clients' and the loops' coroutines run (transport/async.hpp).
  [[nodiscard]] async::Executor executor() const;
  // The same io_context, for the kube clients' strands (an Asio translation unit).
  [[nodiscard]] boost::asio::io_context& io_context();
  // Whether handlers may still be posted to the io_context: for threads of
  // their own that may outlive the runtime (kube's host-name lookups), which
  // check it under the mutex before posting.
  struct Liveness {
    std::mutex mutex;
    bool running = true;
  };
  [[nodiscard]] std::shared_ptr<Liveness> liveness() const;

  // Runs `start` (may be empty: the component was made running), after which
  // `stop` is owed. A component of an earlier stage than one already started
  // is refused (std::logic_error): the order above is the only one. When
  // `start` throws, the exception propagates and nothing is owed for it.
  // From one thread at a time: the owner's, or a start-up coroutine's while
  // the owner waits in wait().
  void start(Stage stage, std::string name, const std::function<void()>& start, std::function<void()> stop);

  // Ends wait(), from any thread (a start-up that failed says why). The first
  // cause is kept.
  void request_stop(std::string failure = {});
  // Blocks the calling thread (the main thread: the only blocking wait of
  // `fedmetrics serve`) until a termination signal or request_stop().
  StopCause wait();

  // Stops every component, the last started first, each once (a stop that
  // throws is logged and the others still stop), then joins the threads:
  // no handler runs after it returns. Idempotent. Not from a runtime thread.
  void stop();

  // The names of the components still owed a stop, in start order (tests, logs).
  [[nodiscard]] std::vector<std::string> running() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace fedmetrics::transport

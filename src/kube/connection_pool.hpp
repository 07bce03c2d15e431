#pragma once
// The keep-alive connections of one client: idle ones checked before reuse
// and closed when idle too long, a bound on how many are open, and requests
// waiting for a free one until their deadline. Used on the client's strand.
#include <utility>  // before Asio's awaitable.hpp (Boost + C++20 coroutines)

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include "kube/connector.hpp"

namespace fedmetrics::kube {

class ConnectionPool {
 public:
  // `executor`: the client's strand, on which the idle connections are closed.
  ConnectionPool(boost::asio::any_io_executor executor, std::size_t max_connections,
                 std::chrono::milliseconds idle_timeout);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // A connection for one request: an idle one that is still open (unless
  // `fresh`: a retry must not meet another connection as old as the one
  // that failed), a new slot (a null stream: open one in it), or a wait
  // until one frees up or the deadline passes (nullopt).
  boost::asio::awaitable<std::optional<std::unique_ptr<Stream>>> acquire(Deadline deadline, bool fresh);
  // Gives a connection back (or, when `stream` is null, frees its slot).
  void release(std::unique_ptr<Stream> stream);

  struct Counts {
    std::size_t open = 0;
    std::size_t idle = 0;
    std::uint64_t idle_closed = 0;  // expired, or found closed by the peer before reuse
  };
  [[nodiscard]] Counts counts() const;

 private:
  struct State;
  // Shared with the sweep timer's handler, which may run after the pool is gone.
  std::shared_ptr<State> state_;
};

}  // namespace fedmetrics::kube

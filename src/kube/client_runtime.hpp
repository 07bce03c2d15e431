#pragma once
// The inside of ClientRuntime, for the client's own translation units: the
// io_context its threads run, and whether handlers may still be posted to it.
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "fedmetrics/kube/https_client.hpp"

namespace fedmetrics::kube {

struct ClientRuntime::Impl {
  // Whether handlers may still be posted to `io`: host-name lookups run on
  // detached threads that may outlive the runtime (see Connector::resolve).
  struct Liveness {
    std::mutex mutex;
    bool running = true;
  };
  std::shared_ptr<Liveness> liveness = std::make_shared<Liveness>();
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{io.get_executor()};
  std::vector<std::thread> threads;
};

}  // namespace fedmetrics::kube

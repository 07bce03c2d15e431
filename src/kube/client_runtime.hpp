#pragma once
// The inside of ClientRuntime, for the client's own translation units: the
// io_context its threads run (the process runtime's), and whether handlers
// may still be posted to it.
#include <memory>

#include <boost/asio/io_context.hpp>

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/transport/runtime.hpp"

namespace fedmetrics::kube {

struct ClientRuntime::Impl {
  // Whether handlers may still be posted to `io`: host-name lookups run on
  // detached threads that may outlive the runtime (see Connector::resolve).
  using Liveness = transport::Runtime::Liveness;

  explicit Impl(std::unique_ptr<transport::Runtime> own) : Impl(*own) { owned = std::move(own); }
  explicit Impl(transport::Runtime& r) : runtime(&r), io(r.io_context()), liveness(r.liveness()) {}

  std::unique_ptr<transport::Runtime> owned;  // null: the process runtime's threads
  transport::Runtime* runtime;
  boost::asio::io_context& io;
  std::shared_ptr<Liveness> liveness;
};

}  // namespace fedmetrics::kube

#pragma once
// Where a component's coroutines run (an io_context: the ClientRuntime's),
// handed through headers that must stay free of Asio: the loops' public
// headers take one of these, and only the .cpp that runs coroutines includes
// transport/async.hpp to turn it back into an Asio executor.
#include <memory>

namespace fedmetrics::async {

// transport/async.hpp; held by pointer in headers that must stay free of Asio.
class Job;
class Wakeup;

class Executor {
 public:
  struct Impl;  // transport/async.hpp
  Executor() = default;
  explicit Executor(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  [[nodiscard]] const Impl* impl() const { return impl_.get(); }
  explicit operator bool() const { return impl_ != nullptr; }

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace fedmetrics::async

#include "kube/client_runtime.hpp"

#include <exception>

#include <spdlog/spdlog.h>

#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::kube {

namespace {

// A completion handler of the client threw (a bug): logged, not fatal.
void report_handler_failure(const char* what) { spdlog::error("member client: a completion handler failed: {}", what); }

}  // namespace

ClientRuntime::ClientRuntime(unsigned threads) : impl_(std::make_unique<Impl>()) {
  for (unsigned i = 0; i < std::max(1U, threads); ++i)
    impl_->threads.emplace_back([this] {
      // A callback that throws must not take the process down: log it and go on.
      for (;;) {
        try {
          impl_->io.run();
          return;
        } catch (const std::exception& e) {
          report_handler_failure(e.what());
        } catch (...) {
          report_handler_failure("unknown exception");
        }
      }
    });
}

void ClientRuntime::stop() {
  {
    std::lock_guard lock(impl_->liveness->mutex);
    impl_->liveness->running = false;
  }
  impl_->work.reset();
  impl_->io.stop();
  for (auto& t : impl_->threads)
    if (t.joinable()) t.join();
}

ClientRuntime::~ClientRuntime() { stop(); }

async::Executor ClientRuntime::executor() { return async::wrap(impl_->io.get_executor()); }

}  // namespace fedmetrics::kube

#include "fedmetrics/transport/runtime.hpp"

#include <utility>  // before Asio's awaitable.hpp (transport/async.hpp)

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <optional>
#include <stdexcept>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <spdlog/spdlog.h>

#include "fedmetrics/transport/async.hpp"
#include "termination_signals.hpp"

namespace fedmetrics::transport {

const char* to_string(Stage stage) {
  switch (stage) {
    case Stage::clients: return "clients";
    case Stage::discovery: return "discovery";
    case Stage::server: return "server";
    case Stage::loops: return "loops";
  }
  return "?";
}

struct Runtime::Impl {
  struct Component {
    Stage stage;
    std::string name;
    std::function<void()> stop;
  };

  std::shared_ptr<Liveness> liveness = std::make_shared<Liveness>();
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{io.get_executor()};
  std::vector<std::thread> threads;
  // Before the threads: they inherit the blocked signals.
  std::unique_ptr<TerminationSignals> signals;

  std::mutex mutex;  // guards `cause`
  std::condition_variable stop_requested;
  std::optional<StopCause> cause;

  std::vector<Component> started;  // the owner's thread only

  void request_stop(StopCause why) {
    std::lock_guard lock(mutex);
    if (cause) return;
    cause = std::move(why);
    stop_requested.notify_all();
  }

  void stop_components() {
    while (!started.empty()) {
      Component component = std::move(started.back());
      started.pop_back();  // before the stop: a stop that throws is not retried
      const auto began = std::chrono::steady_clock::now();
      try {
        if (component.stop) component.stop();
        spdlog::debug(
            "shutdown: {} stopped ({} ms)", component.name,
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began).count());
      } catch (const std::exception& e) {
        spdlog::error("shutdown: stopping {} failed: {}", component.name, e.what());
      } catch (...) {
        spdlog::error("shutdown: stopping {} failed", component.name);
      }
    }
  }

  void join_threads() {
    {
      std::lock_guard lock(liveness->mutex);
      liveness->running = false;
    }
    work.reset();
    io.stop();
    for (auto& t : threads)
      if (t.joinable()) t.join();
    threads.clear();
    signals.reset();
  }
};

namespace {

// A completion handler of the runtime threw (a bug): logged, not fatal.
void report_handler_failure(const char* what) { spdlog::error("runtime: a completion handler failed: {}", what); }

void run_io(boost::asio::io_context& io) {
  // A callback that throws must not take the process down: log it and go on.
  for (;;) {
    try {
      io.run();
      return;
    } catch (const std::exception& e) {
      report_handler_failure(e.what());
    } catch (...) {
      report_handler_failure("unknown exception");
    }
  }
}

}  // namespace

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>()) {
  if (options.termination_signals)
    impl_->signals = std::make_unique<TerminationSignals>([impl = impl_.get()](int signal) {
      impl->request_stop(StopCause{signal, {}});
    });
  for (unsigned i = 0; i < std::max(1U, options.threads); ++i)
    impl_->threads.emplace_back([impl = impl_.get()] { run_io(impl->io); });
}

Runtime::~Runtime() { stop(); }

async::Executor Runtime::executor() const { return async::wrap(impl_->io.get_executor()); }

boost::asio::io_context& Runtime::io_context() { return impl_->io; }

std::shared_ptr<Runtime::Liveness> Runtime::liveness() const { return impl_->liveness; }

void Runtime::start(Stage stage, std::string name, const std::function<void()>& start, std::function<void()> stop) {
  if (!impl_->started.empty() && stage < impl_->started.back().stage)
    throw std::logic_error("runtime: " + name + " (" + to_string(stage) + ") started after " +
                           impl_->started.back().name + " (" + to_string(impl_->started.back().stage) + ")");
  // A start that throws leaves what started before to stop(): its caller may
  // be a runtime thread (serve's start-up), which must not wait for the
  // others to stop; the owner stops them (or the destructor does).
  if (start) start();
  impl_->started.push_back(Impl::Component{stage, std::move(name), std::move(stop)});
}

void Runtime::request_stop(std::string failure) { impl_->request_stop(StopCause{0, std::move(failure)}); }

// The one blocking wait of the process's owner: it has nothing else to do
// until the runtime is told to stop (its work runs on the runtime's threads).
StopCause Runtime::wait() {
  std::unique_lock lock(impl_->mutex);
  impl_->stop_requested.wait(lock, [this] { return impl_->cause.has_value(); });
  return *impl_->cause;
}

void Runtime::stop() {
  impl_->stop_components();
  impl_->join_threads();
}

std::vector<std::string> Runtime::running() const {
  std::vector<std::string> names;
  for (const auto& c : impl_->started) names.push_back(c.name);
  return names;
}

}  // namespace fedmetrics::transport

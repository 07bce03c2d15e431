// The TLS server's public face: its threads (one io_context each), start
// and stop, graceful shutdown, and the settings that change while it serves.
// The parts are in tls_server_impl.hpp's files.
#include "fedmetrics/transport/tls_server.hpp"

#include "tls_server_impl.hpp"

#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::transport {

namespace asio = boost::asio;
namespace ssl = asio::ssl;

namespace {

// Runs an io_context on this thread; a handler that throws is logged, not fatal.
void run_io(asio::io_context& io) {
  for (;;) {
    try {
      io.run();
      return;
    } catch (const std::exception& e) {
      spdlog::error("server: a handler failed: {}", e.what());
    }
  }
}

std::vector<std::unique_ptr<TlsServer::Impl::Worker>> make_workers(unsigned threads) {
  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  std::vector<std::unique_ptr<TlsServer::Impl::Worker>> made;
  for (unsigned i = 0; i < threads; ++i) made.push_back(std::make_unique<TlsServer::Impl::Worker>());
  return made;
}

async::Task<void> drain_into(TlsServer::Impl& impl, std::chrono::milliseconds grace, std::size_t& left) {
  left = co_await impl.drain(grace);
}

}  // namespace

TlsServer::Impl::Impl(TlsServerOptions o, RequestHandler h)
    : options(std::move(o)),
      handler(std::move(h)),
      workers(make_workers(options.threads)),
      tls(std::make_shared<ssl::context>(server_detail::make_tls_context(options))) {
  acceptor.emplace(main_io());
  listen(options.port);
}

// What runs on the workers refers to the rest of Impl: the workers (and
// with their io_contexts, any session frame left) go first.
TlsServer::Impl::~Impl() {
  signals.reset();
  acceptor.reset();
  workers.clear();
}

std::shared_ptr<ssl::context> TlsServer::Impl::current_tls() {
  std::lock_guard lock(tls_mutex);
  return tls;
}

TlsServer::TlsServer(TlsServerOptions options, RequestHandler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {}

TlsServer::~TlsServer() {
  if (impl_->threads.empty()) return;
  stop();
  join();
}

std::uint16_t TlsServer::port() const { return impl_->bound_port; }

void TlsServer::run() {
  impl_->signals.emplace(impl_->main_io(), SIGINT, SIGTERM);
  impl_->signals->async_wait([this](const boost::system::error_code& ec, int signal) {
    if (!ec) {
      spdlog::info("received signal {}, shutting down", signal);
      stop();
    }
  });
  impl_->start_accepting(impl_->accept_epoch);
  impl_->serving = true;
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < impl_->workers.size(); ++i)
    pool.emplace_back([this, i] { run_io(impl_->workers[i]->io); });
  run_io(impl_->main_io());
  for (auto& t : pool) t.join();
  impl_->serving = false;
}

void TlsServer::start() {
  impl_->start_accepting(impl_->accept_epoch);
  impl_->serving = true;
  for (auto& worker : impl_->workers) impl_->threads.emplace_back([&io = worker->io] { run_io(io); });
}

async::Task<std::size_t> TlsServer::drain(std::chrono::milliseconds grace) {
  co_return co_await asio::co_spawn(impl_->main_io(), impl_->drain(grace), asio::use_awaitable);
}

std::size_t TlsServer::shutdown(std::chrono::milliseconds grace) {
  if (!impl_->serving) {  // no thread to drain on, and no connection to drain
    impl_->draining = true;
    impl_->close_listener();
    return 0;
  }
  std::size_t left = 0;
  async::run_and_wait(async::Strand(impl_->main_io().get_executor()),
                      [impl = impl_.get(), grace, &left] { return drain_into(*impl, grace, left); });
  return left;
}

void TlsServer::join() {
  for (auto& t : impl_->threads)
    if (t.joinable()) t.join();
  impl_->threads.clear();
}

void TlsServer::stop() {
  impl_->serving = false;
  asio::post(impl_->main_io(), [this] {
    impl_->close_listener();
    if (impl_->signals) {
      boost::system::error_code ignored;
      impl_->signals->cancel(ignored);
    }
    // Each worker cancels its sessions and stops once they have ended, so
    // that no session's frame outlives the io_context it runs on.
    for (auto& worker : impl_->workers) asio::post(worker->io, [w = worker.get()] { w->halt(); });
  });
}

void TlsServer::set_accepting(bool accepting) {
  bool was = impl_->accepting.exchange(accepting);
  if (was == accepting) return;
  if (!accepting) ++impl_->generation;
  asio::post(impl_->main_io(), [this, accepting] {
    if (!accepting) {
      impl_->close_listener();
    } else if (!impl_->acceptor->is_open()) {
      impl_->reopen();
    }
  });
}

void TlsServer::set_certificate(const std::string& cert_file, const std::string& key_file) {
  TlsServerOptions options = impl_->options;
  options.cert_file = cert_file;
  options.key_file = key_file;
  auto context = std::make_shared<ssl::context>(server_detail::make_tls_context(options));
  {
    std::lock_guard lock(impl_->tls_mutex);
    impl_->tls = std::move(context);
  }
  ++impl_->generation;
}

void TlsServer::schedule(std::chrono::nanoseconds delay, std::function<void()> task) {
  auto timer = std::make_shared<asio::steady_timer>(impl_->main_io(), delay);
  timer->async_wait([timer, task = std::move(task)](const boost::system::error_code& ec) {
    if (!ec) task();
  });
}

}  // namespace fedmetrics::transport

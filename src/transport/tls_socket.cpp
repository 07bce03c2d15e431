#include "fedmetrics/transport/tls_socket.hpp"

#include <utility>  // before Asio's awaitable.hpp (Boost + C++20 coroutines)

#include <algorithm>
#include <array>
#include <cerrno>
#include <stdexcept>

#include <sys/socket.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <openssl/err.h>

namespace fedmetrics::transport {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------
// ConnectionDeadline

ConnectionDeadline::ConnectionDeadline(asio::any_io_executor executor, tcp::socket* socket)
    : timer_(std::move(executor)), socket_(socket) {}

void ConnectionDeadline::expires_after(Clock::duration duration) {
  // Later than the armed timer: it fires first and re-arms for the new time.
  expires_at(Clock::now() + duration);
}

void ConnectionDeadline::expires_at(Clock::time_point at) {
  expired_ = false;
  deadline_ = at;
  if (!armed_ || armed_for_ > deadline_) arm(deadline_);
}

void ConnectionDeadline::expires_never() {
  expired_ = false;
  deadline_ = Clock::time_point::max();  // an armed timer finds nothing to do
}

// The socket is going away: a wait still pending ends now, and its handler,
// like one already on its way, finds `alive_` gone.
ConnectionDeadline::~ConnectionDeadline() {
  socket_ = nullptr;
  timer_.cancel();
}

void ConnectionDeadline::arm(Clock::time_point at) {
  armed_ = true;
  armed_for_ = at;
  timer_.expires_at(at);  // a wait already pending completes with operation_aborted
  timer_.async_wait([this, alive = std::weak_ptr<const bool>(alive_), at](const error_code& ec) {
    if (ec == asio::error::operation_aborted || alive.expired()) return;  // cancelled, or the socket is gone
    if (armed_for_ != at) return;                                         // re-armed meanwhile
    armed_ = false;
    on_timer();
  });
}

void ConnectionDeadline::on_timer() {
  if (socket_ == nullptr || deadline_ == Clock::time_point::max()) return;
  if (Clock::now() < deadline_) {
    arm(deadline_);
    return;
  }
  expired_ = true;
  error_code ignored;
  socket_->cancel(ignored);  // pending waits end now; TlsSocket::wait reports timed_out
}

// ---------------------------------------------------------------------------
// The output BIO: OpenSSL's records are appended to TlsSocket::output_.

struct OutputBio {
  static int write(BIO* bio, const char* data, int size) {
    auto* socket = static_cast<TlsSocket*>(BIO_get_data(bio));
    BIO_clear_retry_flags(bio);
    if (socket == nullptr || size < 0) return -1;
    try {
      socket->output_.append(data, static_cast<std::size_t>(size));
    } catch (const std::bad_alloc&) {
      return -1;  // never let an exception cross OpenSSL's C frames
    }
    return size;
  }
  static long ctrl(BIO* bio, int command, long, void*) {
    auto* socket = static_cast<TlsSocket*>(BIO_get_data(bio));
    switch (command) {
      case BIO_CTRL_FLUSH: return 1;  // TlsSocket::flush sends; OpenSSL only needs to hear "done"
      case BIO_CTRL_WPENDING:
      case BIO_CTRL_PENDING: return socket != nullptr ? static_cast<long>(socket->pending_output()) : 0;
      default: return 0;
    }
  }
  static int create(BIO* bio) {
    BIO_set_init(bio, 1);
    return 1;
  }
  static BIO_METHOD* method() {
    static BIO_METHOD* const m = [] {
      BIO_METHOD* made = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "fedmetrics output");
      if (made == nullptr) return made;
      BIO_meth_set_write(made, &OutputBio::write);
      BIO_meth_set_ctrl(made, &OutputBio::ctrl);
      BIO_meth_set_create(made, &OutputBio::create);
      return made;
    }();
    return m;
  }
};

// ---------------------------------------------------------------------------
// TlsSocket

TlsSocket::TlsSocket(tcp::socket socket, SSL_CTX* context, TlsRole role)
    : socket_(std::move(socket)), deadline_(socket_.get_executor(), &socket_) {
  error_code ec;
  socket_.non_blocking(true, ec);
  if (ec) throw std::runtime_error("cannot make the socket non-blocking: " + ec.message());
  ssl_ = SSL_new(context);
  BIO* input = BIO_new_socket(static_cast<int>(socket_.native_handle()), BIO_NOCLOSE);
  BIO* output = OutputBio::method() != nullptr ? BIO_new(OutputBio::method()) : nullptr;
  if (ssl_ == nullptr || input == nullptr || output == nullptr) {
    BIO_free(input);
    BIO_free(output);
    if (ssl_ != nullptr) SSL_free(ssl_);
    ssl_ = nullptr;
    throw std::runtime_error("OpenSSL cannot set up a connection (out of memory?)");
  }
  BIO_set_data(output, this);
  SSL_set_bio(ssl_, input, output);  // the SSL owns both BIOs now
  if (role == TlsRole::server) SSL_set_accept_state(ssl_);
  else SSL_set_connect_state(ssl_);
}

void TlsSocket::abort() {
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.cancel(ignored);
}

bool TlsSocket::idle_and_open() {
  // Bytes OpenSSL already holds (decrypted or not) are unexpected between
  // answers: an alert, or the start of something we did not ask for.
  if (SSL_pending(ssl_) > 0 || SSL_has_pending(ssl_) == 1) return false;
  char byte = 0;
  const ssize_t n = ::recv(socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK;  // nothing to read: still open
  return false;  // 0: the peer closed; > 0: it sent something while idle (a close_notify)
}

TlsSocket::~TlsSocket() {
  if (ssl_ != nullptr) {
    BIO_set_data(SSL_get_wbio(ssl_), nullptr);
    SSL_free(ssl_);
  }
}

asio::awaitable<error_code> TlsSocket::wait(tcp::socket::wait_type type) {
  if (deadline_.expired()) co_return asio::error::timed_out;
  auto [ec] = co_await socket_.async_wait(type, asio::as_tuple(asio::use_awaitable));
  if (deadline_.expired()) co_return asio::error::timed_out;
  co_return ec;
}

// The error behind an SSL_* call's failure, as Asio's ssl::stream names it.
error_code TlsSocket::error_after(int result, int saved_errno) {
  const int error = SSL_get_error(ssl_, result);
  switch (error) {
    case SSL_ERROR_ZERO_RETURN: return asio::error::eof;
    case SSL_ERROR_SYSCALL:
      if (ERR_peek_error() == 0 && saved_errno == 0) return asio::ssl::error::stream_truncated;
      if (saved_errno != 0) return {saved_errno, boost::system::system_category()};
      break;
    default: break;
  }
  const unsigned long code = ERR_get_error();
  if (code == 0) return asio::ssl::error::stream_truncated;
  if (ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING) return asio::ssl::error::stream_truncated;
  return {static_cast<int>(code), asio::error::get_ssl_category()};
}

asio::awaitable<error_code> TlsSocket::handshake() {
  for (;;) {
    ERR_clear_error();
    errno = 0;
    const int result = SSL_do_handshake(ssl_);
    const int saved_errno = errno;
    const int error = result == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl_, result);
    // Read the error now: the thread's OpenSSL error queue is not ours after a co_await.
    const error_code failure =
        result == 1 || error == SSL_ERROR_WANT_READ ? error_code{} : error_after(result, saved_errno);
    // The handshake's own flights (ServerHello..., session tickets, alerts).
    if (pending_output() > 0)
      if (auto ec = co_await flush(); ec && !failure) co_return ec;
    if (failure) co_return failure;
    if (result == 1) co_return error_code{};
    if (auto ec = co_await wait(tcp::socket::wait_read)) co_return ec;
  }
}

asio::awaitable<std::pair<error_code, std::size_t>> TlsSocket::read_some(char* data, std::size_t size) {
  for (;;) {
    ERR_clear_error();
    errno = 0;
    std::size_t n = 0;
    const int result = SSL_read_ex(ssl_, data, size, &n);
    const int saved_errno = errno;
    const int error = result == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl_, result);
    // Read the error now: the thread's OpenSSL error queue is not ours after a co_await.
    const error_code failure =
        result == 1 || error == SSL_ERROR_WANT_READ ? error_code{} : error_after(result, saved_errno);
    // Reading can produce records to send (a TLS 1.3 KeyUpdate answer, an alert).
    if (pending_output() > 0 && !failure)
      if (auto ec = co_await flush()) co_return std::pair{ec, std::size_t{0}};
    if (failure) co_return std::pair{failure, std::size_t{0}};
    if (result == 1) co_return std::pair{error_code{}, n};
    if (auto ec = co_await wait(tcp::socket::wait_read)) co_return std::pair{ec, std::size_t{0}};
    // Readable, but maybe only a TLS record with no data (a TLS 1.3 session
    // ticket after the handshake): a cancellation that came meanwhile found
    // no wait to end, and must not leave the next one waiting for the peer.
    const auto cancellation = co_await asio::this_coro::cancellation_state;
    if (cancellation.cancelled() != asio::cancellation_type::none)
      co_return std::pair{error_code(asio::error::operation_aborted), std::size_t{0}};
  }
}

error_code TlsSocket::write(const char* data, std::size_t size) {
  // Room for all the records at once: appended record by record, a 37 KB
  // answer would otherwise grow (and copy) the buffer three times, past the
  // capacity flush() keeps, so every answer would pay for it again.
  constexpr std::size_t kRecordBytes = 16 * 1024;
  constexpr std::size_t kRecordOverhead = 64;  // header, nonce, tag, padding: 22 to 29 bytes with AES-GCM
  try {
    output_.reserve(output_.size() + size + (size / kRecordBytes + 1) * kRecordOverhead);
  } catch (const std::bad_alloc&) {
    // The output BIO reports the failure, record by record.
  }
  while (size > 0) {
    ERR_clear_error();
    errno = 0;
    std::size_t n = 0;
    const int result = SSL_write_ex(ssl_, data, size, &n);
    if (result != 1) return error_after(result, errno);
    data += n;
    size -= n;
  }
  return {};
}

asio::awaitable<error_code> TlsSocket::flush() {
  const int fd = static_cast<int>(socket_.native_handle());
  while (sent_ < output_.size()) {
    const ssize_t n = ::send(fd, output_.data() + sent_, output_.size() - sent_, MSG_NOSIGNAL);
    if (n > 0) {
      sent_ += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (auto ec = co_await wait(tcp::socket::wait_write)) co_return ec;
      continue;
    }
    co_return error_code(n < 0 ? errno : EPIPE, boost::system::system_category());
  }
  output_.clear();
  sent_ = 0;
  // Keep the buffer of an ordinary answer for the next one; give back what a
  // large one grew it to, so that idle connections stay small.
  constexpr std::size_t kKeptCapacity = 64 * 1024;
  if (output_.capacity() > kKeptCapacity) std::string().swap(output_);
  co_return error_code{};
}

asio::awaitable<void> TlsSocket::shutdown() {
  ERR_clear_error();
  SSL_shutdown(ssl_);  // queues close_notify; the client's is not awaited
  if (auto ec = co_await flush()) co_return;
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  // Drain until the client closes: closing with unread bytes would send a
  // reset that can destroy the end of the answer before the client read it.
  std::array<char, 4096> sink{};
  const int fd = static_cast<int>(socket_.native_handle());
  for (std::size_t drained = 0; drained < 1024 * 1024;) {
    const ssize_t n = ::recv(fd, sink.data(), sink.size(), 0);
    if (n > 0) {
      drained += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) co_return;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) co_return;
    if (auto ec = co_await wait(tcp::socket::wait_read)) co_return;
  }
}

}  // namespace fedmetrics::transport

#pragma once
// One TLS connection (either side), written for the serving path's speed:
// OpenSSL reads straight from the socket (no memory BIO to copy through),
// and every record a message produces is gathered in one buffer and sent
// with one send(). Asio's ssl::stream instead pushes every record through a
// 17 KB BIO pair and a send per record, and Beast's flat_stream copies the
// first 16 KB once more; on a 37 KB answer that was four sends and three
// copies, and a score of scheduler rounds to read one.
//
// Not thread-safe: use it from one thread or one strand at a time (the
// server gives every thread its own io_context; the member client runs each
// client on a strand). An Asio header: only Asio translation units include it.
#include <utility>  // before Asio's awaitable.hpp (Boost + C++20 coroutines)

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>
#include <openssl/ssl.h>

namespace fedmetrics::transport {

// One deadline per connection, re-armed lazily: moving it later (the next
// phase of a kept-alive connection) only stores a time; the timer, when it
// fires early, re-arms itself for the stored time. A phase costs two clock
// reads instead of a timer cancel and re-arm. When the deadline passes, the
// socket's pending waits are cancelled and every later wait fails at once.
// Owned by its TlsSocket and gone with it: the timer's wait is cancelled
// then, and a handler already on its way finds the deadline gone (it holds
// only a weak reference to `alive_`) and touches nothing.
class ConnectionDeadline {
 public:
  ConnectionDeadline(boost::asio::any_io_executor executor, boost::asio::ip::tcp::socket* socket);
  ~ConnectionDeadline();
  ConnectionDeadline(const ConnectionDeadline&) = delete;
  ConnectionDeadline& operator=(const ConnectionDeadline&) = delete;
  void expires_after(std::chrono::steady_clock::duration duration);
  void expires_at(std::chrono::steady_clock::time_point at);
  void expires_never();
  [[nodiscard]] bool expired() const { return expired_; }

 private:
  void arm(std::chrono::steady_clock::time_point at);
  void on_timer();

  boost::asio::steady_timer timer_;
  boost::asio::ip::tcp::socket* socket_;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::time_point armed_for_ = std::chrono::steady_clock::time_point::max();
  bool armed_ = false;
  bool expired_ = false;
  // Lives exactly as long as this object; the timer's handler holds it weakly.
  std::shared_ptr<const bool> alive_ = std::make_shared<const bool>(true);
};

enum class TlsRole { server, client };

class TlsSocket {
 public:
  // Throws std::runtime_error when OpenSSL cannot make the connection's SSL.
  // A client sets its server name and verification on native_handle()
  // before the handshake.
  TlsSocket(boost::asio::ip::tcp::socket socket, SSL_CTX* context, TlsRole role = TlsRole::server);
  ~TlsSocket();
  TlsSocket(const TlsSocket&) = delete;
  TlsSocket& operator=(const TlsSocket&) = delete;

  [[nodiscard]] boost::asio::ip::tcp::socket& socket() { return socket_; }
  [[nodiscard]] SSL* native_handle() { return ssl_; }
  [[nodiscard]] ConnectionDeadline& deadline() { return deadline_; }

  // Ends the connection from another handler on the same strand: pending
  // waits complete now and every later read finds the end of the stream.
  // (Not close(): OpenSSL keeps the descriptor's number, which must not be
  // reused under it.)
  void abort();

  // For a pooled client connection about to be reused: true when the peer
  // has neither closed it nor sent anything since the last answer. Checked
  // without waiting (a peek at the socket), as Go's transport does by
  // reading every idle connection in the background: a server that closed
  // an idle connection has sent a close_notify alert or a FIN, and a
  // request written into it would be lost.
  [[nodiscard]] bool idle_and_open();

  // The handshake of the socket's role; errors as Asio reports TLS errors.
  boost::asio::awaitable<boost::system::error_code> handshake();
  // Up to `size` bytes of application data. eof when the client closed with
  // close_notify, ssl::error::stream_truncated when it closed without.
  boost::asio::awaitable<std::pair<boost::system::error_code, std::size_t>> read_some(char* data, std::size_t size);
  // Encrypts into the output buffer; nothing is sent until flush().
  boost::system::error_code write(const char* data, std::size_t size);
  [[nodiscard]] std::size_t pending_output() const { return output_.size() - sent_; }
  // Sends the output buffer, waiting for the socket when it is full.
  boost::asio::awaitable<boost::system::error_code> flush();
  // close_notify, then half-close and read what the client still sends until
  // it closes or the deadline passes, so that closing never resets the
  // connection under an answer the client has not read yet.
  boost::asio::awaitable<void> shutdown();

 private:
  // Waits until the socket is readable or writable (or the deadline passed:
  // asio::error::timed_out).
  boost::asio::awaitable<boost::system::error_code> wait(boost::asio::ip::tcp::socket::wait_type type);
  boost::system::error_code error_after(int result, int saved_errno);

  boost::asio::ip::tcp::socket socket_;
  ConnectionDeadline deadline_;  // after socket_: gone before it
  SSL* ssl_ = nullptr;
  std::string output_;  // ciphertext not sent yet (from sent_)
  std::size_t sent_ = 0;
  friend struct OutputBio;
};

}  // namespace fedmetrics::transport

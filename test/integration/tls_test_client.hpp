#pragma once
// A deliberately plain HTTPS/1.1 client for the TlsServer tests: blocking
// POSIX sockets and OpenSSL, no Asio, so that the tests exercise the server
// against an independent TLS and HTTP implementation. Every read is bounded
// by SO_RCVTIMEO (and every write by SO_SNDTIMEO), so no test can hang on a
// server that misbehaves.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fedmetrics::testing::tls {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline milliseconds elapsed_since(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

// OpenSSL's socket BIO writes with write(2): a write to a connection the
// server already reset would kill the test program with SIGPIPE.
inline void ignore_sigpipe() {
  static std::once_flag once;
  std::call_once(once, [] { ::signal(SIGPIPE, SIG_IGN); });
}

inline bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

inline std::string lowercase(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

inline void set_timeouts(int fd, milliseconds receive, milliseconds send) {
  auto to_timeval = [](milliseconds t) {
    t = std::max(t, milliseconds(1));  // 0 would mean "no timeout"
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(t.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
    return tv;
  };
  timeval r = to_timeval(receive), s = to_timeval(send);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &r, sizeof r);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &s, sizeof s);
}

// A TCP connection to 127.0.0.1:port, or -1 with errno set (ECONNREFUSED
// when nothing listens). `receive_buffer` (SO_RCVBUF) must be set before
// connecting to limit the advertised window.
inline int tcp_connect(std::uint16_t port, int receive_buffer = 0, milliseconds timeout = milliseconds(3000)) {
  ignore_sigpipe();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (receive_buffer > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  set_timeouts(fd, timeout, timeout);  // SO_SNDTIMEO also bounds connect(2)
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

enum class ReadStatus {
  data,     // bytes arrived
  closed,   // the server ended the connection (close_notify, FIN or RST)
  timeout,  // nothing arrived within the receive timeout
  error,    // a TLS error (see Client::error())
};

inline const char* to_string(ReadStatus s) {
  switch (s) {
    case ReadStatus::data: return "data";
    case ReadStatus::closed: return "closed";
    case ReadStatus::timeout: return "timeout";
    case ReadStatus::error: return "error";
  }
  return "?";
}

// Waits for a plain TCP connection (no TLS) to be ended by the server.
// Returns closed, timeout or error; `bytes` counts whatever arrived meanwhile.
struct CloseResult {
  ReadStatus status = ReadStatus::timeout;
  std::size_t bytes = 0;
  milliseconds elapsed{0};
};

inline CloseResult tcp_wait_for_close(int fd, milliseconds within) {
  CloseResult result;
  const auto start = Clock::now();
  char sink[4096];
  for (;;) {
    auto remaining = within - elapsed_since(start);
    if (remaining <= milliseconds(0)) break;
    set_timeouts(fd, remaining, remaining);
    ssize_t n = ::recv(fd, sink, sizeof sink, 0);
    if (n > 0) {
      result.bytes += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0 || errno == ECONNRESET) {
      result.status = ReadStatus::closed;
      break;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
    result.status = ReadStatus::error;
    break;
  }
  result.elapsed = elapsed_since(start);
  return result;
}

struct ClientOptions {
  int tls_version = 0;    // 0: negotiate; else exactly this one (TLS1_2_VERSION, ...)
  std::string ca_file;    // when set, verify the server's chain against it (and 127.0.0.1)
  std::string cert_file;  // a client certificate to present, with its key
  std::string key_file;
  int receive_buffer = 0;              // SO_RCVBUF; 0 = the kernel's default
  milliseconds receive_timeout{3000};  // bounds every read and write
};

// A parsed HTTP/1.1 response.
struct Response {
  int status = 0;
  std::string status_line;  // "HTTP/1.1 200 OK"
  std::string raw_head;     // status line and header lines exactly as received, with the final CRLF CRLF
  std::vector<std::pair<std::string, std::string>> headers;  // in order, values trimmed
  std::string body;
  std::vector<std::string> chunks;  // the chunked body as the server framed it (empty when not chunked)

  // The first header of that name (case-insensitive).
  [[nodiscard]] std::optional<std::string> header(std::string_view name) const {
    for (const auto& [n, v] : headers)
      if (iequals(n, name)) return v;
    return std::nullopt;
  }
  [[nodiscard]] std::vector<std::string> headers_named(std::string_view name) const {
    std::vector<std::string> values;
    for (const auto& [n, v] : headers)
      if (iequals(n, name)) values.push_back(v);
    return values;
  }
};

class Client {
 public:
  enum class Connect { ok, refused, handshake_failed };

  Client() = default;
  ~Client() { close(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // TCP connect, then the TLS handshake (SSL_connect on the blocking socket).
  Connect connect(std::uint16_t port, const ClientOptions& options = {}) {
    close();
    options_ = options;
    fd_ = tcp_connect(port, options.receive_buffer, options.receive_timeout);
    if (fd_ < 0) {
      error_ = std::string("connect: ") + std::strerror(errno);
      return Connect::refused;
    }
    ctx_.reset(SSL_CTX_new(TLS_client_method()));
    SSL_CTX* ctx = ctx_.get();
    if (options.tls_version != 0) {
      SSL_CTX_set_min_proto_version(ctx, options.tls_version);
      SSL_CTX_set_max_proto_version(ctx, options.tls_version);
      if (options.tls_version < TLS1_2_VERSION) {
        // OpenSSL 3 refuses TLS 1.0/1.1 itself at security level 1 and up:
        // lower it so that the old ClientHello really reaches the server and
        // the refusal we observe is the server's.
        SSL_CTX_set_security_level(ctx, 0);
        SSL_CTX_set_cipher_list(ctx, "DEFAULT:@SECLEVEL=0");
      }
    }
    // A server that closes without close_notify reads as a plain EOF (ZERO_RETURN).
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    if (!options.ca_file.empty()) {
      if (SSL_CTX_load_verify_locations(ctx, options.ca_file.c_str(), nullptr) != 1) return fail_handshake("load CA");
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    }
    if (!options.cert_file.empty()) {
      if (SSL_CTX_use_certificate_chain_file(ctx, options.cert_file.c_str()) != 1 ||
          SSL_CTX_use_PrivateKey_file(ctx, options.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
        return fail_handshake("load client certificate");
    }
    ssl_.reset(SSL_new(ctx));
    SSL_set_fd(ssl_.get(), fd_);
    SSL_set_tlsext_host_name(ssl_.get(), "localhost");
    if (!options.ca_file.empty()) X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_.get()), "127.0.0.1");
    ERR_clear_error();
    errno = 0;
    int rc = SSL_connect(ssl_.get());
    if (rc != 1) return fail_handshake("SSL_connect", rc);
    return Connect::ok;
  }

  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] SSL* ssl() const { return ssl_.get(); }
  [[nodiscard]] int fd() const { return fd_; }
  // Bytes read but not yet consumed by read_response/read_chunk.
  [[nodiscard]] std::string& buffer() { return buffer_; }

  // Writes all of `bytes` (one SSL_write: one or more TLS records, no partial writes).
  bool write(std::string_view bytes) {
    ERR_clear_error();
    errno = 0;
    int rc = SSL_write(ssl_.get(), bytes.data(), static_cast<int>(bytes.size()));
    if (rc == static_cast<int>(bytes.size())) return true;
    error_ = describe("SSL_write", rc);
    return false;
  }

  // One SSL_read, appended to buffer().
  ReadStatus read_some() {
    char chunk[64 * 1024];
    ERR_clear_error();
    errno = 0;
    int n = SSL_read(ssl_.get(), chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      return ReadStatus::data;
    }
    int saved_errno = errno;
    switch (SSL_get_error(ssl_.get(), n)) {
      case SSL_ERROR_ZERO_RETURN: return ReadStatus::closed;
      case SSL_ERROR_WANT_READ:  // the socket's SO_RCVTIMEO expired (EAGAIN)
      case SSL_ERROR_WANT_WRITE: return ReadStatus::timeout;
      case SSL_ERROR_SYSCALL:
        if (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK) return ReadStatus::timeout;
        if (saved_errno == 0 || saved_errno == ECONNRESET || saved_errno == EPIPE) return ReadStatus::closed;
        [[fallthrough]];
      default: error_ = describe("SSL_read", n, saved_errno); return ReadStatus::error;
    }
  }

  // Reads until buffer() contains `delimiter`.
  bool read_until(std::string_view delimiter) {
    while (buffer_.find(delimiter) == std::string::npos)
      if (!read_more("waiting for the delimiter")) return false;
    return true;
  }

  // The status line and headers only; the body stays unread.
  std::optional<Response> read_head() {
    if (!read_until("\r\n\r\n")) return std::nullopt;
    const std::size_t end = buffer_.find("\r\n\r\n") + 4;
    Response r;
    r.raw_head = buffer_.substr(0, end);
    buffer_.erase(0, end);
    std::size_t line_end = r.raw_head.find("\r\n");
    r.status_line = r.raw_head.substr(0, line_end);
    if (r.status_line.rfind("HTTP/1.", 0) != 0 || r.status_line.size() < 12) {
      error_ = "not an HTTP response: " + r.status_line;
      return std::nullopt;
    }
    r.status = std::atoi(r.status_line.c_str() + 9);
    for (std::size_t pos = line_end + 2; pos < end - 2;) {
      std::size_t next = r.raw_head.find("\r\n", pos);
      std::string line = r.raw_head.substr(pos, next - pos);
      pos = next + 2;
      std::size_t colon = line.find(':');
      if (colon == std::string::npos) {
        r.headers.emplace_back(line, "");  // malformed: kept so that a test can see it
        continue;
      }
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      value.erase(value.find_last_not_of(" \t") + 1);
      r.headers.emplace_back(line.substr(0, colon), value);
    }
    return r;
  }

  // The next chunk's data of a chunked body; "" for the terminating 0-chunk
  // (its trailer section is consumed too); nullopt on close, timeout or garbage.
  std::optional<std::string> read_chunk() {
    if (!read_until("\r\n")) return std::nullopt;
    std::size_t line_end = buffer_.find("\r\n");
    std::string size_line = buffer_.substr(0, line_end);
    char* parsed_end = nullptr;
    unsigned long size = std::strtoul(size_line.c_str(), &parsed_end, 16);
    if (parsed_end == size_line.c_str()) {
      error_ = "bad chunk size line: " + size_line.substr(0, 80);
      return std::nullopt;
    }
    buffer_.erase(0, line_end + 2);
    if (size == 0) {
      for (;;) {  // trailer fields, up to the empty line
        if (!read_until("\r\n")) return std::nullopt;
        std::size_t e = buffer_.find("\r\n");
        buffer_.erase(0, e + 2);
        if (e == 0) return std::string();
      }
    }
    while (buffer_.size() < size + 2)
      if (!read_more("reading a chunk")) return std::nullopt;
    if (buffer_.compare(size, 2, "\r\n") != 0) {
      error_ = "chunk data not followed by CRLF";
      return std::nullopt;
    }
    std::string data = buffer_.substr(0, size);
    buffer_.erase(0, size + 2);
    return data;
  }

  // A whole response: the head, then the body framed by Transfer-Encoding:
  // chunked, Content-Length, or the end of the connection. `head_request`: the
  // request was HEAD, so no body follows whatever the headers say.
  std::optional<Response> read_response(bool head_request = false) {
    auto r = read_head();
    if (!r) return std::nullopt;
    if (head_request || r->status / 100 == 1 || r->status == 204 || r->status == 304) return r;
    if (auto te = r->header("Transfer-Encoding"); te && lowercase(*te).find("chunked") != std::string::npos) {
      for (;;) {
        auto chunk = read_chunk();
        if (!chunk) return std::nullopt;
        if (chunk->empty()) return r;
        r->body += *chunk;
        r->chunks.push_back(std::move(*chunk));
      }
    }
    if (auto length = r->header("Content-Length")) {
      const auto size = static_cast<std::size_t>(std::stoull(*length));
      while (buffer_.size() < size)
        if (!read_more("reading a Content-Length body")) return std::nullopt;
      r->body = buffer_.substr(0, size);
      buffer_.erase(0, size);
      return r;
    }
    for (;;) {  // no framing: the body ends with the connection
      ReadStatus s = read_some();
      if (s == ReadStatus::closed) break;
      if (s != ReadStatus::data) return std::nullopt;
    }
    r->body = std::move(buffer_);
    buffer_.clear();
    return r;
  }

  // Reads and discards until the server ends the connection, or `within`
  // passes (status timeout). `bytes` counts what arrived meanwhile, plus
  // whatever was still unconsumed in buffer().
  CloseResult wait_for_close(milliseconds within) {
    CloseResult result;
    result.bytes = buffer_.size();
    buffer_.clear();
    const auto start = Clock::now();
    for (;;) {
      auto remaining = within - elapsed_since(start);
      if (remaining <= milliseconds(0)) {
        result.status = ReadStatus::timeout;
        break;
      }
      set_timeouts(fd_, remaining, options_.receive_timeout);
      ReadStatus s = read_some();
      result.bytes += buffer_.size();
      buffer_.clear();
      if (s == ReadStatus::data || s == ReadStatus::timeout) continue;
      result.status = s;
      break;
    }
    result.elapsed = elapsed_since(start);
    if (fd_ >= 0) set_timeouts(fd_, options_.receive_timeout, options_.receive_timeout);
    return result;
  }

  // Closes our sending side: TLS close_notify, then a TCP FIN; reading stays possible.
  void shutdown_sending() {
    SSL_shutdown(ssl_.get());
    ::shutdown(fd_, SHUT_WR);
  }

  // Closes the socket at once, without close_notify (a client that goes away).
  void close() {
    ssl_.reset();
    ctx_.reset();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    buffer_.clear();
  }

 private:
  struct SslFree {
    void operator()(SSL* s) const { SSL_free(s); }
  };
  struct CtxFree {
    void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
  };

  bool read_more(const char* what) {
    ReadStatus s = read_some();
    if (s == ReadStatus::data) return true;
    if (s != ReadStatus::error) error_ = std::string(what) + ": " + to_string(s);
    return false;
  }

  Connect fail_handshake(const char* what, int rc = 0) {
    error_ = describe(what, rc);
    return Connect::handshake_failed;
  }

  std::string describe(const char* what, int rc, int saved_errno = -1) const {
    if (saved_errno < 0) saved_errno = errno;
    std::string text = what;
    if (ssl_) text += ": SSL_get_error " + std::to_string(SSL_get_error(ssl_.get(), rc));
    if (saved_errno != 0) text += std::string(", errno ") + std::strerror(saved_errno);
    while (unsigned long e = ERR_get_error()) {
      char buf[256];
      ERR_error_string_n(e, buf, sizeof buf);
      text += std::string(", ") + buf;
    }
    return text;
  }

  ClientOptions options_;
  int fd_ = -1;
  std::unique_ptr<SSL_CTX, CtxFree> ctx_;
  std::unique_ptr<SSL, SslFree> ssl_;
  std::string buffer_;
  std::string error_;
};

}  // namespace fedmetrics::testing::tls

#pragma once
// An HTTP exchange as plain values, free of Beast, so that request handling is
// a plain function that unit tests call without sockets.
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fedmetrics::transport {

struct HttpRequest {
  std::string method;  // "GET"
  std::string target;  // "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Dweb"
  std::vector<std::pair<std::string, std::string>> headers = {};  // as received, in order
  std::string body = {};
  // The client's certificate chain, leaf first, as PEM; empty when it sent
  // none (or the server does not request client certificates). Unverified:
  // the authenticator decides which CA it must chain to.
  std::string peer_certificates_pem = {};
};

// A response body produced piece by piece after the headers were sent (a
// watch). The handler writes; the server sends every piece as an HTTP/1.1
// chunk as soon as it can and ends the body when the handler closes it, or
// at the time close_after() set. Thread-safe: the producer and the server
// run on different threads.
class ResponseStream {
 public:
  // Queues a piece. False once the server is done with the stream: stop producing.
  bool write(std::string piece);
  // Ends the body (the server then finishes the response).
  void close();
  // Ends the body `duration` from now (a watch's timeoutSeconds), unless it ended before.
  void close_after(std::chrono::steady_clock::duration duration);
  // Runs `ended` once when the server is done with the stream (the body
  // ended, the client went away, the request was a HEAD, the server
  // stops), on the server's thread, or at once when it is already: where a
  // producer that writes from elsewhere (a watch's store) lets go of it.
  void on_abandon(std::function<void()> ended);

  // The server's side.
  struct Pending {
    std::vector<std::string> pieces;
    bool closed = false;
    bool client_gone = false;
    std::optional<std::chrono::steady_clock::time_point> close_at;  // close_after()'s
  };
  Pending take();
  // Called (from the producer's thread) after every write or close.
  void set_wakeup(std::function<void()> wakeup);
  // The server is done with the stream: the client went away, the body
  // ended, or the server stops. Runs on_abandon()'s function; idempotent.
  void abandon();

 private:
  void wake();
  mutable std::mutex mutex_;
  std::vector<std::string> pieces_;
  bool closed_ = false;
  bool abandoned_ = false;
  std::optional<std::chrono::steady_clock::time_point> close_at_;
  std::function<void()> wakeup_;
  std::function<void()> on_abandon_;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers (Warning, ...)
  // When set, the body is these bytes and `body` is ignored: one encoded
  // answer written to many clients without a copy each.
  std::shared_ptr<const std::string> shared_body = {};
  // When set, the body is these pieces one after the other (`body` and
  // shared_body are ignored), written without being joined: a merged list
  // straight from the members' encoded items. The pointer keeps what they
  // point into alive.
  std::shared_ptr<const std::vector<std::string_view>> body_pieces = {};
  // When set, `body` is ignored and the body is streamed, chunked, from here.
  std::shared_ptr<ResponseStream> stream = {};

  // The body when it is one string (not body_pieces).
  [[nodiscard]] const std::string& body_bytes() const { return shared_body ? *shared_body : body; }
  // The body whatever its form, as one string (a copy: for tests and rare paths).
  [[nodiscard]] std::string body_text() const {
    if (!body_pieces) return body_bytes();
    std::string out;
    out.reserve(body_size());
    for (const std::string_view piece : *body_pieces) out.append(piece);
    return out;
  }
  [[nodiscard]] std::size_t body_size() const {
    if (!body_pieces) return body_bytes().size();
    std::size_t size = 0;
    for (const std::string_view piece : *body_pieces) size += piece.size();
    return size;
  }
};

}  // namespace fedmetrics::transport

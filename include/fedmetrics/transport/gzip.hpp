#pragma once
// gzip (RFC 1952) as HTTP's Content-Encoding uses it, on zlib: a pure codec,
// Accept-Encoding negotiation (RFC 9110 section 12.5.3), and the server's
// decision to compress a response. No sockets, no Asio.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::transport {

// One gzip member holding `data`. Level 1 (zlib's fastest) by default, as
// kube-apiserver's response compression (defaultGzipContentEncodingLevel = 1
// since kubernetes/kubernetes#112296, 4 before; not gzip.DefaultCompression):
// JSON lists come out at most 1.5x (typically 1.1x-1.3x) larger than at the
// higher levels for a fraction of the CPU, and that CPU is spent on the
// serving thread, in the request's path.
std::string gzip_compress(std::string_view data, int level = 1);

// Why gzip_decompress failed.
enum class GzipFailure {
  none,       // it did not
  too_large,  // the output would pass max_output_bytes (message: "response larger than ...")
  malformed,  // corrupt, truncated, or trailing bytes that start no gzip member (message: "malformed gzip body: ...")
};

// What gzip_decompress returns: an Expected like every other decoder of
// untrusted input here (ok(), value(), error().message; it converts to a
// k8s::Expected<std::string>), plus the kind of failure, so that a client can
// classify it without reading the message. A subclass rather than a new error
// type: k8s::Error stays a plain message shared by the wire library.
class [[nodiscard]] GzipResult : public k8s::Expected<std::string> {
 public:
  GzipResult(std::string inflated) : Expected(std::move(inflated)) {}  // NOLINT: implicit like Expected
  GzipResult(GzipFailure failure, k8s::Error error) : Expected(std::move(error)), failure_(failure) {}
  [[nodiscard]] GzipFailure failure() const { return failure_; }

 private:
  GzipFailure failure_ = GzipFailure::none;
};

// Inflates a gzip body of at most max_output_bytes once inflated. Streams in
// 32 KiB chunks (on the stack) and checks the cap before keeping each one, so
// a bomb (100 MiB of zeros in 100 KiB) fails as soon as it passes the cap. The
// output buffer doubles as it grows but never past the cap: no allocation is
// larger than the cap. Concatenated members are one body (Go's gzip.Reader
// multistream default). Every member's CRC-32 and length are checked. Empty
// input is an empty body, as Go's net/http client reads a zero-length gzip
// response; any other truncation is malformed.
GzipResult gzip_decompress(std::string_view data, std::size_t max_output_bytes);

// Whether an Accept-Encoding value admits gzip (RFC 9110 section 12.5.3): a
// comma-separated list of codings, case-insensitive, each with an optional
// ";q=" weight (default 1). "gzip" or its alias "x-gzip" with q > 0 does;
// "gzip;q=0" does not, even beside "*"; otherwise "*" with q > 0 does (a
// coding listed twice counts with its higher weight). An
// empty value asks for identity only. An unparsable weight makes its entry
// count as q=0: a client that sends garbage gets no compression.
bool accepts_gzip(std::string_view accept_encoding);

// The server's side, as kube-apiserver's deferredResponseWriter: compresses
// `response` in place, setting "Content-Encoding: gzip" and adding
// "Vary: Accept-Encoding", when all hold: min_bytes > 0, the request's
// Accept-Encoding admits gzip, the status is 200, the body is not streamed,
// has at least min_bytes bytes, and carries no Content-Encoding already. A
// shared body is replaced by its compressed copy. Returns whether it did.
// kube-apiserver compresses bodies over 128 KiB (APIResponseCompression).
bool compress_response(HttpResponse& response, std::string_view accept_encoding, std::size_t min_bytes);

}  // namespace fedmetrics::transport

#include "fedmetrics/transport/gzip.hpp"

#define ZLIB_CONST  // next_in is const: zlib never writes to its input
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <climits>
#include <new>
#include <stdexcept>

#include "fedmetrics/k8s/ascii.hpp"

namespace fedmetrics::transport {

namespace {

// zlib counts in uInt (32 bits); longer inputs are fed in slices.
constexpr std::size_t kMaxSlice = std::size_t{1} << 30;
// Bytes are produced this many at a time; inflated ones are checked against
// the cap before they are kept. On the stack when inflating.
constexpr std::size_t kChunk = 32 * 1024;
// windowBits 15 (32 KiB, the most) + 16: a gzip wrapper rather than zlib's.
constexpr int kGzipWindowBits = 15 + 16;

struct Deflater {
  z_stream z{};
  explicit Deflater(int level) {
    int rc = deflateInit2(&z, level, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY);
    if (rc == Z_MEM_ERROR) throw std::bad_alloc();
    if (rc != Z_OK) throw std::invalid_argument("gzip_compress: invalid compression level " + std::to_string(level));
  }
  ~Deflater() { deflateEnd(&z); }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;
};

struct Inflater {
  z_stream z{};
  Inflater() {
    if (inflateInit2(&z, kGzipWindowBits) != Z_OK) throw std::bad_alloc();  // only fails for memory
  }
  ~Inflater() { inflateEnd(&z); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
};

GzipResult malformed(std::string_view why) {
  return GzipResult(GzipFailure::malformed, k8s::Error{"malformed gzip body: " + std::string(why)});
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

using k8s::iequals;

// RFC 9110 qvalue: "0" ["." 0*3DIGIT] / "1" ["." 0*3("0")], in thousandths; -1 when malformed.
int parse_qvalue(std::string_view v) {
  if (v.empty() || (v[0] != '0' && v[0] != '1')) return -1;
  int thousandths = (v[0] - '0') * 1000;
  if (v.size() == 1) return thousandths;
  if (v[1] != '.' || v.size() > 5) return -1;
  int scale = 100;
  for (char c : v.substr(2)) {
    if (c < '0' || c > '9') return -1;
    thousandths += (c - '0') * scale;
    scale /= 10;
  }
  return thousandths <= 1000 ? thousandths : -1;
}

}  // namespace

std::string gzip_compress(std::string_view data, int level) {
  Deflater d(level);
  std::string out;
  // Enough for the whole output in one call for any body under 1 GiB.
  out.resize(deflateBound(&d.z, static_cast<uLong>(std::min(data.size(), kMaxSlice))));
  std::size_t fed = 0, written = 0;
  for (;;) {
    if (d.z.avail_in == 0 && fed < data.size()) {
      std::size_t slice = std::min(data.size() - fed, kMaxSlice);
      d.z.next_in = reinterpret_cast<const Bytef*>(data.data() + fed);
      d.z.avail_in = static_cast<uInt>(slice);
      fed += slice;
    }
    if (written == out.size()) out.resize(out.size() + out.size() / 2 + kChunk);
    std::size_t room = std::min(out.size() - written, kMaxSlice);
    d.z.next_out = reinterpret_cast<Bytef*>(out.data() + written);
    d.z.avail_out = static_cast<uInt>(room);
    int rc = deflate(&d.z, fed == data.size() ? Z_FINISH : Z_NO_FLUSH);
    written += room - d.z.avail_out;
    if (rc == Z_STREAM_END) break;
    // Z_BUF_ERROR only says no progress was possible this call (output full); anything else is a bug.
    if (rc != Z_OK && rc != Z_BUF_ERROR) throw std::logic_error("gzip_compress: deflate failed");
  }
  out.resize(written);
  return out;
}

GzipResult gzip_decompress(std::string_view data, std::size_t max_output_bytes) {
  if (data.empty()) return std::string();
  Inflater inflater;
  z_stream& z = inflater.z;
  std::string out;
  std::array<unsigned char, kChunk> chunk;
  std::size_t fed = 0;
  for (;;) {
    if (z.avail_in == 0 && fed < data.size()) {
      std::size_t slice = std::min(data.size() - fed, kMaxSlice);
      z.next_in = reinterpret_cast<const Bytef*>(data.data() + fed);
      z.avail_in = static_cast<uInt>(slice);
      fed += slice;
    }
    z.next_out = chunk.data();
    z.avail_out = static_cast<uInt>(chunk.size());
    int rc = inflate(&z, Z_NO_FLUSH);
    std::size_t produced = chunk.size() - z.avail_out;
    if (produced > 0) {
      if (produced > max_output_bytes - out.size())  // out.size() <= max_output_bytes always
        return GzipResult(
            GzipFailure::too_large,
            k8s::Error{"response larger than " + std::to_string(max_output_bytes) + " bytes once gzip-decompressed"});
      // Grow by doubling, but never past the cap: std::string's own growth
      // could reserve twice the cap for the last chunk.
      if (out.size() + produced > out.capacity())
        out.reserve(std::min(max_output_bytes, std::max(out.capacity() * 2, out.size() + produced)));
      out.append(reinterpret_cast<const char*>(chunk.data()), produced);
    }
    switch (rc) {
      case Z_OK: continue;
      case Z_STREAM_END: {
        // One member ended (its CRC-32 and length matched). What follows must
        // be another member (Go's multistream reader) or nothing.
        std::string_view rest = data.substr(fed - z.avail_in);
        if (rest.empty()) return out;
        static constexpr char kMagic[] = {'\x1f', '\x8b'};
        if (rest[0] != kMagic[0] || (rest.size() > 1 && rest[1] != kMagic[1]))
          return malformed("trailing data after the gzip stream");
        if (inflateReset(&z) != Z_OK) throw std::logic_error("gzip_decompress: inflateReset failed");
        continue;
      }
      case Z_BUF_ERROR:
        // No progress with a whole chunk free: zlib wants input. Feed the next
        // slice if there is one; otherwise the body was cut short.
        if (z.avail_in == 0 && fed < data.size()) continue;
        return malformed("unexpected end of data (truncated)");
      case Z_MEM_ERROR: throw std::bad_alloc();
      case Z_DATA_ERROR: return malformed(z.msg != nullptr ? z.msg : "invalid data");
      default:  // Z_NEED_DICT cannot follow a gzip header; Z_STREAM_ERROR would be a bug here
        return malformed(z.msg != nullptr ? z.msg : "inflate error " + std::to_string(rc));
    }
  }
}

bool accepts_gzip(std::string_view accept_encoding) {
  int gzip_q = -1, star_q = -1;  // thousandths; -1 = not listed
  while (!accept_encoding.empty()) {
    auto comma = accept_encoding.find(',');
    std::string_view element = accept_encoding.substr(0, comma);
    accept_encoding = comma == std::string_view::npos ? std::string_view() : accept_encoding.substr(comma + 1);
    auto semicolon = element.find(';');
    std::string_view coding = trim(element.substr(0, semicolon));
    if (coding.empty()) continue;  // "a, , b": empty list elements are allowed and ignored
    int q = 1000;
    std::string_view params = semicolon == std::string_view::npos ? std::string_view() : element.substr(semicolon + 1);
    while (!params.empty()) {
      auto next = params.find(';');
      std::string_view param = trim(params.substr(0, next));
      params = next == std::string_view::npos ? std::string_view() : params.substr(next + 1);
      auto eq = param.find('=');
      if (eq == std::string_view::npos || !iequals(trim(param.substr(0, eq)), "q")) continue;  // not a weight
      q = std::max(parse_qvalue(trim(param.substr(eq + 1))), 0);
    }
    if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) gzip_q = std::max(gzip_q, q);
    else if (coding == "*") star_q = std::max(star_q, q);
  }
  if (gzip_q >= 0) return gzip_q > 0;
  return star_q > 0;
}

bool compress_response(HttpResponse& response, std::string_view accept_encoding, std::size_t min_bytes) {
  if (min_bytes == 0 || response.status != 200 || response.stream) return false;
  if (response.body_size() < min_bytes) return false;
  for (const auto& [name, value] : response.headers)
    if (iequals(name, "Content-Encoding")) return false;
  if (!accepts_gzip(accept_encoding)) return false;
  std::string compressed = gzip_compress(response.body_pieces ? response.body_text() : response.body_bytes());
  response.body = std::move(compressed);
  response.shared_body.reset();
  response.body_pieces.reset();
  response.headers.emplace_back("Content-Encoding", "gzip");
  // One Vary naming Accept-Encoding (an answer relayed from a member may carry its own).
  bool varies = false;
  for (const auto& [name, value] : response.headers)
    if (iequals(name, "Vary") && value.find("ccept-") != std::string::npos) varies = true;
  if (!varies) response.headers.emplace_back("Vary", "Accept-Encoding");
  return true;
}

}  // namespace fedmetrics::transport

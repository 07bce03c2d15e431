#include "fedmetrics/transport/gzip.hpp"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace fedmetrics::transport;

namespace {

constexpr std::size_t kMiB = 1024 * 1024;

// "hello, gzip\n" as `gzip -n -9` writes it: an encoder other than ours.
const std::string kGnuGzip{
    "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xcb\x48\xcd\xc9\xc9\xd7\x51\x48\xaf\xca\x2c"
    "\xe0\x02\x00\x86\x1f\x82\xa4\x0c\x00\x00\x00",
    32};

// A pod list's worth of JSON-like text with random numbers: compressible, not trivially.
std::string json_like(std::size_t bytes) {
  std::mt19937_64 rng(42);
  std::string out = "{\"items\":[";
  while (out.size() < bytes) {
    out += "{\"metadata\":{\"name\":\"web-" + std::to_string(rng() % 100000) + "\",\"namespace\":\"shop\"},";
    out += "\"usage\":{\"cpu\":\"" + std::to_string(rng() % 1000000) + "n\",\"memory\":\"" +
           std::to_string(rng() % 100000) + "Ki\"}},";
  }
  out.resize(bytes);
  return out;
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

TEST_CASE("gzip: round trips", "[transport][gzip]") {
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{11}, std::size_t{70 * 1024}, kMiB}) {
    for (int level : {1, 6, 9}) {
      INFO("size " << size << " level " << level);
      std::string data = json_like(size);
      std::string gz = gzip_compress(data, level);
      REQUIRE(gz.size() >= 18);  // 10-byte header, 8-byte trailer (RFC 1952)
      CHECK(gz.substr(0, 3) == "\x1f\x8b\x08");
      auto back = gzip_decompress(gz, size);
      REQUIRE(back.ok());
      CHECK(back.failure() == GzipFailure::none);
      CHECK(*back == data);
    }
  }
  // The default is level 1, and it does compress.
  std::string data = json_like(kMiB);
  CHECK(gzip_compress(data) == gzip_compress(data, 1));
  CHECK(gzip_compress(data).size() < data.size() / 2);
  // Random bytes do not compress; they must still round-trip.
  std::string noise(kMiB, '\0');
  std::mt19937 rng(7);
  for (auto& c : noise) c = static_cast<char>(rng());
  auto back = gzip_decompress(gzip_compress(noise), noise.size());
  REQUIRE(back.ok());
  CHECK(*back == noise);
  // Another encoder's output.
  auto gnu = gzip_decompress(kGnuGzip, 100);
  REQUIRE(gnu.ok());
  CHECK(*gnu == "hello, gzip\n");
  // An invalid level is the caller's bug.
  CHECK_THROWS_AS(gzip_compress("x", 42), std::invalid_argument);
}

TEST_CASE("gzip: empty input is an empty body", "[transport][gzip]") {
  auto r = gzip_decompress("", 0);
  REQUIRE(r.ok());
  CHECK(r->empty());
}

TEST_CASE("gzip: the output cap", "[transport][gzip]") {
  std::string data = json_like(100'000);
  std::string gz = gzip_compress(data);
  CHECK(gzip_decompress(gz, data.size()).ok());  // exactly the cap is fine
  auto over = gzip_decompress(gz, data.size() - 1);
  REQUIRE_FALSE(over.ok());
  CHECK(over.failure() == GzipFailure::too_large);
  CHECK(over.error().message == "response larger than 99999 bytes once gzip-decompressed");
  // Converts to a plain Expected for callers that only want the message.
  fedmetrics::k8s::Expected<std::string> plain = gzip_decompress(gz, 10);
  CHECK(starts_with(plain.error().message, "response larger than"));
}

TEST_CASE("gzip: corrupt data is malformed", "[transport][gzip]") {
  std::string data = json_like(10'000);
  std::string gz = gzip_compress(data);
  struct Case {
    const char* what;
    std::string body;
    const char* message;
  };
  std::string bad_crc = gz, bad_size = gz, bad_magic = gz, bad_method = gz, flipped = gz;
  bad_crc[gz.size() - 8] = static_cast<char>(bad_crc[gz.size() - 8] ^ 1);
  bad_size[gz.size() - 1] = static_cast<char>(bad_size[gz.size() - 1] ^ 1);
  bad_magic[1] = 'x';
  bad_method[2] = 7;
  flipped[gz.size() / 2] = static_cast<char>(flipped[gz.size() / 2] ^ 0x55);
  std::vector<Case> cases = {
      {"plain JSON", data, "malformed gzip body: incorrect header check"},
      {"bad CRC-32", bad_crc, "malformed gzip body: incorrect data check"},
      {"bad ISIZE", bad_size, "malformed gzip body: incorrect length check"},
      {"bad magic", bad_magic, "malformed gzip body: incorrect header check"},
      {"not deflate", bad_method, "malformed gzip body: unknown compression method"},
      {"a flipped byte in the data", flipped, nullptr},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    auto r = gzip_decompress(c.body, 1 << 20);
    REQUIRE_FALSE(r.ok());
    CHECK(r.failure() == GzipFailure::malformed);
    if (c.message != nullptr) CHECK(r.error().message == c.message);
    else CHECK(starts_with(r.error().message, "malformed gzip body: "));
  }
}

TEST_CASE("gzip: every truncation is malformed", "[transport][gzip]") {
  std::string gz = gzip_compress(json_like(5'000));
  for (std::size_t cut = 1; cut < gz.size(); ++cut) {
    INFO("first " << cut << " of " << gz.size() << " bytes");
    auto r = gzip_decompress(std::string_view(gz).substr(0, cut), 1 << 20);
    REQUIRE_FALSE(r.ok());
    CHECK(r.failure() == GzipFailure::malformed);
    CHECK(r.error().message == "malformed gzip body: unexpected end of data (truncated)");
  }
}

TEST_CASE("gzip: trailing garbage is malformed, concatenated members are one body", "[transport][gzip]") {
  std::string a = gzip_compress("first,"), b = gzip_compress("second"), empty = gzip_compress("");
  for (std::string trailing : {std::string("x"), std::string(4, '\0'), std::string("\n"), std::string("\x1f\x8c", 2)}) {
    INFO("trailing " << trailing.size() << " bytes");
    auto r = gzip_decompress(a + trailing, 100);
    REQUIRE_FALSE(r.ok());
    CHECK(r.failure() == GzipFailure::malformed);
    CHECK(r.error().message == "malformed gzip body: trailing data after the gzip stream");
  }
  auto two = gzip_decompress(a + b, 100);
  REQUIRE(two.ok());
  CHECK(*two == "first,second");
  auto with_empty = gzip_decompress(empty + a + empty + kGnuGzip, 100);
  REQUIRE(with_empty.ok());
  CHECK(*with_empty == "first,hello, gzip\n");
  // The cap counts the whole body, across members.
  CHECK(gzip_decompress(a + b, 11).failure() == GzipFailure::too_large);
  // A second member cut short is truncation, not trailing garbage.
  for (std::size_t cut : {std::size_t{1}, std::size_t{2}, std::size_t{12}, b.size() - 1}) {
    INFO("second member cut to " << cut);
    auto r = gzip_decompress(a + b.substr(0, cut), 100);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "malformed gzip body: unexpected end of data (truncated)");
  }
}

TEST_CASE("gzip: accepts_gzip reads Accept-Encoding as RFC 9110 does", "[transport][gzip]") {
  struct Case {
    const char* header;
    bool accepts;
  };
  const Case cases[] = {
      {"gzip", true},
      {"GZIP", true},
      {"x-gzip", true},
      {"gzip, deflate, br", true},  // Go's and curl's
      {"br, gzip;q=0.5", true},
      {"br,gzip;q=0.001", true},
      {"gzip;q=0", false},
      {"gzip;q=0.000", false},
      {"gzip; q=0.0, br", false},
      {"gzip ; q=1.0", true},
      {"gzip;Q=1", true},
      {"gzip;level=1;q=0.8", true},  // other parameters are not weights
      {"gzip;q=0;level=1", false},
      {"*", true},
      {"*;q=0", false},
      {"deflate, *;q=0.1", true},
      {"gzip;q=0, *", false},  // explicit refusal beats the wildcard
      {"*, gzip;q=0", false},
      {"gzip;q=0, gzip", true},  // listed twice: the better weight
      {"identity", false},
      {"identity, deflate, br", false},
      {"", false},
      {"   ", false},
      {" , ,gzip, ", true},  // empty list elements are ignored
      {"\tgzip\t", true},
      {"gzipx", false},
      {"xgzip", false},
      {"gzip;q=2", false},  // malformed weights count as q=0
      {"gzip;q=abc", false},
      {"gzip;q=1.5", false},
      {"gzip;q=0.12345", false},
      {"gzip;q=", false},
      {"gzip;q=1.", true},
      {"gzip;", true},
  };
  for (const auto& c : cases) {
    INFO("Accept-Encoding: \"" << c.header << "\"");
    CHECK(accepts_gzip(c.header) == c.accepts);
  }
}

TEST_CASE("gzip: compress_response compresses what kube-apiserver would", "[transport][gzip]") {
  constexpr std::size_t kMin = 1024;
  const std::string big = json_like(kMin), small = json_like(kMin - 1);
  auto response = [](std::string body) { return HttpResponse{200, "application/json", std::move(body), {}}; };
  auto has = [](const HttpResponse& r, const char* name, const char* value) {
    return std::count(r.headers.begin(), r.headers.end(), std::pair<std::string, std::string>{name, value}) == 1;
  };

  auto r = response(big);
  REQUIRE(compress_response(r, "gzip, deflate, br", kMin));
  CHECK(has(r, "Content-Encoding", "gzip"));
  CHECK(has(r, "Vary", "Accept-Encoding"));
  CHECK(r.content_type == "application/json");
  auto inflated = gzip_decompress(r.body, big.size());
  REQUIRE(inflated.ok());
  CHECK(*inflated == big);

  // A shared body is replaced by its compressed copy; the shared bytes are untouched.
  auto shared_bytes = std::make_shared<const std::string>(big);
  HttpResponse shared{200, "application/json", "", {}, shared_bytes};
  REQUIRE(compress_response(shared, "gzip", kMin));
  CHECK_FALSE(shared.shared_body);
  CHECK(*shared_bytes == big);
  CHECK(shared.body_bytes() == r.body);

  struct Case {
    const char* what;
    HttpResponse response;
    const char* accept;
    std::size_t min_bytes;
  };
  HttpResponse not_found = response(big);
  not_found.status = 404;
  HttpResponse streamed = response(big);
  streamed.stream = std::make_shared<ResponseStream>();
  HttpResponse encoded = response(big);
  encoded.headers.emplace_back("content-encoding", "identity");
  std::vector<Case> unchanged = {
      {"too small", response(small), "gzip", kMin}, {"compression off", response(big), "gzip", 0},
      {"not asked for", response(big), "", kMin},   {"refused", response(big), "gzip;q=0, *", kMin},
      {"not 200", not_found, "gzip", kMin},         {"streamed", streamed, "gzip", kMin},
      {"already encoded", encoded, "gzip", kMin},
  };
  for (auto& c : unchanged) {
    INFO(c.what);
    auto before = c.response.body;
    auto headers = c.response.headers.size();
    CHECK_FALSE(compress_response(c.response, c.accept, c.min_bytes));
    CHECK(c.response.body == before);
    CHECK(c.response.headers.size() == headers);
  }
}

// gzip_decompress on any bytes, with its size cap. Checked: what it inflates
// fits the cap, and one byte less of cap is too_large, not a different body
// or malformed; and any bytes, compressed by gzip_compress, inflate back to
// themselves under a cap of exactly their size.
//
// The cap is 100,000 bytes, not the client's (--max-response-bytes, MiBs):
// the cap logic is the same for any value, and this one still spans several
// 32 KiB inflate chunks and ends inside one. A 1 MiB cap made every
// decompression bomb the fuzzer finds inflate a megabyte twice, which cost
// most of each run (1,800 exec/s over 310 s).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fedmetrics/transport/gzip.hpp"
#include "fuzz_check.hpp"

using fedmetrics::transport::GzipFailure;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = fedmetrics::fuzz::as_text(data, size);
  constexpr std::size_t kCap = 100'000;
  const auto inflated = fedmetrics::transport::gzip_decompress(bytes, kCap);
  if (inflated.ok()) {
    FUZZ_CHECK(inflated.failure() == GzipFailure::none, "ok with a failure");
    FUZZ_CHECK(inflated->size() <= kCap, "inflated %zu bytes past the cap", inflated->size());
    if (!inflated->empty()) {
      const auto capped = fedmetrics::transport::gzip_decompress(bytes, inflated->size() - 1);
      FUZZ_CHECK(!capped.ok() && capped.failure() == GzipFailure::too_large,
                 "a cap one byte short of %zu is not too_large", inflated->size());
    }
  } else {
    FUZZ_CHECK(inflated.failure() != GzipFailure::none, "an error without a failure: %s",
               inflated.error().message.c_str());
  }
  const std::string compressed = fedmetrics::transport::gzip_compress(bytes);
  const auto back = fedmetrics::transport::gzip_decompress(compressed, size);
  FUZZ_CHECK(back.ok() && *back == bytes, "%zu bytes do not survive gzip_compress and gzip_decompress", size);
  return 0;
}

// The gzip bomb's allocations, counted: its own executable, because counting
// means replacing the global operator new and delete, which must not change
// how every other unit test allocates (nor what the sanitizers check there).
#include "fedmetrics/transport/gzip.hpp"

#include <zlib.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace fedmetrics::transport;

// Counts what operator new hands out while a test asks it to, so that the
// bomb test can show that decompression stopped at the cap rather than
// inflating everything first. Replacing the global operator new is
// program-wide; outside a counted section it is plain malloc and free.
namespace {
std::atomic<bool> g_counting{false};
std::atomic<std::size_t> g_largest{0};  // bytes, largest single allocation while counting
std::atomic<std::size_t> g_total{0};    // bytes, all allocations while counting
}  // namespace

// GCC sees free() on what operator new returned once these are inlined
// here; it is the pair's own malloc, so the warning does not apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  if (g_counting.load(std::memory_order_relaxed)) {
    g_total += size;
    std::size_t largest = g_largest.load();
    while (size > largest && !g_largest.compare_exchange_weak(largest, size)) {}
  }
  return p;
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return operator new(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return operator new(size, std::nothrow); }
// Every non-aligned delete frees what the matching new above took with malloc.
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace {

struct CountAllocations {
  CountAllocations() {
    g_largest = 0;
    g_total = 0;
    g_counting = true;
  }
  ~CountAllocations() { g_counting = false; }
};

constexpr std::size_t kMiB = 1024 * 1024;

// `total` zero bytes as one gzip member, built without holding them.
std::string zero_bomb(std::size_t total) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) == Z_OK);
  std::vector<unsigned char> zeros(kMiB, 0);
  std::string out;
  std::vector<unsigned char> buffer(256 * 1024);
  for (std::size_t fed = 0; fed < total;) {
    std::size_t n = std::min(zeros.size(), total - fed);
    fed += n;
    z.next_in = zeros.data();
    z.avail_in = static_cast<uInt>(n);
    int flush = fed == total ? Z_FINISH : Z_NO_FLUSH;
    int rc;
    do {
      z.next_out = buffer.data();
      z.avail_out = static_cast<uInt>(buffer.size());
      rc = deflate(&z, flush);
      out.append(reinterpret_cast<const char*>(buffer.data()), buffer.size() - z.avail_out);
    } while (z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  }
  deflateEnd(&z);
  return out;
}

}  // namespace

TEST_CASE("gzip: a bomb stops at the cap without inflating the rest", "[transport][gzip]") {
  std::string bomb = zero_bomb(100 * kMiB);
  CHECK(bomb.size() < 200 * 1024);  // about 1000:1
  constexpr std::size_t kCap = 4 * kMiB;
  std::size_t largest = 0, total = 0;
  bool failed_as_too_large = false;
  {
    CountAllocations counting;
    auto r = gzip_decompress(bomb, kCap);
    failed_as_too_large = !r.ok() && r.failure() == GzipFailure::too_large;
    largest = g_largest;
    total = g_total;
  }
  CHECK(failed_as_too_large);
  INFO("largest allocation " << largest << " bytes, total " << total << " bytes");
  CHECK(largest <= kCap + 1);      // std::string's terminator
  CHECK(total < 2 * kCap + kMiB);  // doubling up to the cap, never the 100 MiB
  // The whole bomb, allowed, is 100 MiB of zeros: the cap was the only stop.
  auto all = gzip_decompress(bomb, 100 * kMiB);
  REQUIRE(all.ok());
  CHECK(all->size() == 100 * kMiB);
}

#pragma once
// What a fuzz target asserts beyond "no crash": a differential or round-trip
// property. A failure prints both sides and aborts, which libFuzzer reports
// as a crash and saves the input.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#define FUZZ_CHECK(condition, ...)                                                              \
  do {                                                                                          \
    if (!(condition)) {                                                                         \
      std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n", __FILE__, __LINE__, #condition); \
      std::fprintf(stderr, __VA_ARGS__);                                                        \
      std::fprintf(stderr, "\n");                                                               \
      std::abort();                                                                             \
    }                                                                                           \
  } while (0)

namespace fedmetrics::fuzz {
inline std::string_view as_text(const unsigned char* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}
}  // namespace fedmetrics::fuzz

#include "fedmetrics/auth/review_cache.hpp"

#include <array>

#include <openssl/evp.h>

namespace fedmetrics::auth {

std::string token_cache_key(std::string_view token) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(token.data(), token.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1) {
    // Not expected (SHA-256 is built in). Empty means "do not cache": a
    // shared key would hand one token's review to another.
    return std::string();
  }
  return std::string(reinterpret_cast<const char*>(digest.data()), length);
}

}  // namespace fedmetrics::auth

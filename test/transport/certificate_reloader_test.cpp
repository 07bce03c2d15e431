// The serving certificate's reload: loaded again only when a file changed,
// and a pair that cannot be loaded is tried again at the next check.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fedmetrics/transport/certificate_reloader.hpp"

namespace fedmetrics::transport {
namespace {

namespace fs = std::filesystem;

struct Pair {
  Pair() : dir(fs::temp_directory_path() / ("fedmetrics-reload-" + std::to_string(::getpid()))) {
    fs::create_directories(dir);
    write(cert(), "cert 1");
    write(key(), "key 1");
  }
  ~Pair() { fs::remove_all(dir); }
  [[nodiscard]] std::string cert() const { return (dir / "tls.crt").string(); }
  [[nodiscard]] std::string key() const { return (dir / "tls.key").string(); }
  // Writes `text` and moves the file's time on, whatever the clock's resolution.
  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
    const auto time = fs::last_write_time(path) + std::chrono::seconds(++ticks);
    fs::last_write_time(path, time);
  }
  static inline int ticks = 0;
  fs::path dir;
};

TEST_CASE("CertificateReloader: loads a pair again only when one of its files changed") {
  Pair pair;
  std::vector<std::string> loaded;
  CertificateReloader reloader(pair.cert(), pair.key(), [&](const std::string& cert, const std::string& key) {
    loaded.push_back(cert + " " + key);
  });
  CHECK_FALSE(reloader.check());  // what is served was read at construction
  CHECK(loaded.empty());

  Pair::write(pair.cert(), "cert 2");
  CHECK(reloader.check());
  CHECK(loaded == std::vector<std::string>{pair.cert() + " " + pair.key()});
  CHECK_FALSE(reloader.check());  // once per change

  Pair::write(pair.key(), "key 2");
  CHECK(reloader.check());
  CHECK(loaded.size() == 2);
}

TEST_CASE("CertificateReloader: a pair that cannot be loaded keeps the current one and is tried again") {
  Pair pair;
  int attempts = 0;
  bool key_written = false;
  CertificateReloader reloader(pair.cert(), pair.key(), [&](const std::string&, const std::string&) {
    ++attempts;
    if (!key_written) throw std::runtime_error("the key does not match the certificate");
  });
  Pair::write(pair.cert(), "cert 2");  // the certificate first, its key not yet
  CHECK_FALSE(reloader.check());
  CHECK_FALSE(reloader.check());  // still changed against what is served: tried again
  CHECK(attempts == 2);
  key_written = true;
  Pair::write(pair.key(), "key 2");
  CHECK(reloader.check());
  CHECK(attempts == 3);
  CHECK_FALSE(reloader.check());
  CHECK(attempts == 3);
}

}  // namespace
}  // namespace fedmetrics::transport

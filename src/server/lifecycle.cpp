#include "server/lifecycle.hpp"

#include <exception>
#include <utility>

#include <spdlog/spdlog.h>

namespace fedmetrics::server {

Lifecycle::~Lifecycle() { stop_all(); }

void Lifecycle::start(std::string name, const std::function<void()>& start, std::function<void()> stop) {
  try {
    if (start) start();
  } catch (...) {
    spdlog::debug("lifecycle: {} did not start; stopping what did", name);
    stop_all();
    throw;
  }
  started_.push_back(Component{std::move(name), std::move(stop)});
}

void Lifecycle::stop_all() {
  while (!started_.empty()) {
    Component component = std::move(started_.back());
    started_.pop_back();  // before the stop: a stop that throws is not retried
    const auto began = std::chrono::steady_clock::now();
    try {
      if (component.stop) component.stop();
      spdlog::debug(
          "shutdown: {} stopped ({} ms)", component.name,
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began).count());
    } catch (const std::exception& e) {
      spdlog::error("shutdown: stopping {} failed: {}", component.name, e.what());
    } catch (...) {
      spdlog::error("shutdown: stopping {} failed", component.name);
    }
  }
}

std::vector<std::string> Lifecycle::running() const {
  std::vector<std::string> names;
  for (const auto& c : started_) names.push_back(c.name);
  return names;
}

}  // namespace fedmetrics::server

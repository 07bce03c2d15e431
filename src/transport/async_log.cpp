// Logging for transport/async.cpp, kept out of its coroutine translation unit.
#include <string>

#include <spdlog/spdlog.h>

namespace fedmetrics::async {

void report_coroutine_failure(const std::string& what, const char* error) {
  spdlog::error("{}: stopped by an unexpected error: {}", what, error);
}

}  // namespace fedmetrics::async

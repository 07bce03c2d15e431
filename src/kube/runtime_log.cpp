#include <spdlog/spdlog.h>

namespace fedmetrics::kube {

// A completion handler of the member client threw (a bug): logged, not fatal.
void report_handler_failure(const char* what) { spdlog::error("member client: a completion handler failed: {}", what); }

}  // namespace fedmetrics::kube

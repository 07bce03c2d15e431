#pragma once
// A server as a reflector sees it (kube::ListWatch), answering from queues
// the test fills: each list takes the next answer (a refused connection when
// none is queued); each watch delivers its lines, then ends as queued, or
// stays open until its coroutine is cancelled (when none is queued, or its
// end is nullopt). Every request's target is kept, in order.
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fedmetrics/kube/reflector.hpp"
#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::testing {

class FakeListWatch final : public kube::ListWatch {
 public:
  struct Watch {
    std::vector<std::string> lines;
    std::optional<kube::HttpResult> end;  // nullopt: open until cancelled
  };
  std::deque<kube::HttpResult> lists;
  std::deque<Watch> watches;
  std::vector<std::string> requests;  // "list <target>", "watch <target>"

  async::Task<kube::HttpResult> list(std::string target, kube::Deadline) override {
    requests.push_back("list " + target);
    if (lists.empty()) co_return k8s::Error{k8s::ErrorKind::Refused, "connection refused"};
    auto answer = std::move(lists.front());
    lists.pop_front();
    co_return answer;
  }

  async::Task<kube::HttpResult> watch(std::string target, kube::Deadline, std::chrono::milliseconds,
                                      std::function<bool(std::string)> on_line) override {
    requests.push_back("watch " + target);
    Watch next;
    if (!watches.empty()) {
      next = std::move(watches.front());
      watches.pop_front();
    }
    for (auto& line : next.lines)
      if (!on_line(std::move(line))) co_return k8s::Error{k8s::ErrorKind::Timeout, "cancelled"};
    if (next.end) co_return std::move(*next.end);
    // Open until cancelled: a wait for a value that never comes.
    async::OneShot<bool> never;
    auto waiting = never.wait();
    try {
      co_await std::move(waiting);
    } catch (const std::exception& e) {
      if (!async::is_cancellation(e)) throw;
    }
    co_return k8s::Error{k8s::ErrorKind::Timeout, "cancelled"};
  }

  // How many requests were made of `kind` ("list", "watch").
  [[nodiscard]] std::size_t count(const std::string& kind) const {
    std::size_t n = 0;
    for (const auto& r : requests) n += r.rfind(kind + " ", 0) == 0;
    return n;
  }
};

}  // namespace fedmetrics::testing

// The coroutine primitives every loop runs on (transport/async.hpp): a Job
// stops when told and only then returns, a TaskGroup's children are
// cancelled with their parent and waited for, a callback port is awaited on
// the coroutine's strand whichever thread answers, the Semaphore bounds
// concurrency, and cancellation stops a coroutine before its next step.
#include "fedmetrics/transport/async.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "fedmetrics/kube/https_client.hpp"

namespace fedmetrics::async {
namespace {

using namespace std::chrono_literals;

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit = 10'000ms) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// A loop that awaits an immediate callback and a short sleep, counting rounds.
Task<void> rounds(std::atomic<int>* count) {
  for (;;) {
    int one = co_await await_callback<int>([](std::function<void(int)> done) { done(1); });
    *count += one;
    co_await sleep_for(1ms);
    co_await throw_if_cancelled();
  }
}

TEST_CASE("async: two jobs on one runtime run until stopped, and stop() returns once each has ended") {
  kube::ClientRuntime runtime(1);
  std::atomic<int> a{0}, b{0};
  Job job_a, job_b;
  job_a.start(make_strand(runtime.executor()), "a", [&] { return rounds(&a); });
  job_b.start(make_strand(runtime.executor()), "b", [&] { return rounds(&b); });
  REQUIRE(eventually([&] { return a > 20 && b > 20; }));
  job_a.stop();
  CHECK_FALSE(job_a.running());
  CHECK(job_b.running());
  int stopped_at = a;
  std::this_thread::sleep_for(20ms);
  CHECK(a == stopped_at);
  CHECK(b > 20);
  job_b.stop();
  CHECK_FALSE(job_b.running());
}

// Ten values, each answered by a thread of its own; whether every resumption was on `strand`.
Task<void> sum_answers(Strand strand, std::vector<std::thread>* answerers, std::atomic<int>* sum,
                       std::atomic<bool>* on_strand) {
  for (int i = 1; i <= 10; ++i) {
    int v = co_await await_callback<int>([answerers, i](std::function<void(int)> done) {
      answerers->emplace_back([done, i] {
        std::this_thread::sleep_for(1ms);
        done(i);
        done(100);  // a second answer is ignored
      });
    });
    if (!strand.running_in_this_thread()) *on_strand = false;
    *sum += v;
  }
}

TEST_CASE("async: await_callback resumes on the coroutine's strand when another thread answers") {
  kube::ClientRuntime runtime(2);
  auto strand = make_strand(runtime.executor());
  std::vector<std::thread> answerers;
  std::atomic<int> sum{0};
  std::atomic<bool> on_strand{true};
  run_and_wait(strand, [&] { return sum_answers(strand, &answerers, &sum, &on_strand); });
  for (auto& t : answerers) t.join();
  CHECK(sum == 55);
  CHECK(on_strand);
}

struct Outcomes {
  std::atomic<int> finished{0}, cancelled{0};
  std::atomic<std::size_t> running_after_50ms{0}, running_after_join{99};
};

Task<void> work_for(std::chrono::milliseconds work, Outcomes* out) {
  try {
    co_await sleep_for(work);
    co_await throw_if_cancelled();
    ++out->finished;
  } catch (const std::exception& e) {
    if (is_cancellation(e)) ++out->cancelled;
  }
}

Task<void> cancel_two_of_three(Strand strand, Outcomes* out) {
  TaskGroup group(strand);
  group.spawn(work_for(1ms, out), "quick");
  group.spawn(work_for(10s, out), "slow");
  group.spawn(work_for(10s, out), "slow");
  co_await sleep_for(50ms);
  out->running_after_50ms = group.size();
  group.cancel();
  co_await group.join();
  out->running_after_join = group.size();
}

TEST_CASE("async: a cancelled TaskGroup child stops at its next co_await, join waits for every child") {
  kube::ClientRuntime runtime(1);
  auto strand = make_strand(runtime.executor());
  Outcomes out;
  run_and_wait(strand, [&] { return cancel_two_of_three(strand, &out); });
  CHECK(out.running_after_50ms == 2);
  CHECK(out.running_after_join == 0);
  CHECK(out.finished == 1);
  CHECK(out.cancelled == 2);
}

Task<void> long_child(std::atomic<int>* ended) {
  struct Count {
    std::atomic<int>* n;
    ~Count() { ++*n; }
  } count{ended};
  co_await sleep_for(10s);
  co_await throw_if_cancelled();
}

Task<void> parent_of_three(Strand strand, std::atomic<int>* children_ended, std::atomic<bool>* parent_ended) {
  struct Mark {
    std::atomic<bool>* b;
    ~Mark() { *b = true; }
  } mark{parent_ended};
  TaskGroup group(strand);
  for (int i = 0; i < 3; ++i) group.spawn(long_child(children_ended), "child");
  co_await group.join();
}

TEST_CASE("async: a Job stopped while its TaskGroup joins cancels the children and still waits for them") {
  kube::ClientRuntime runtime(1);
  auto strand = make_strand(runtime.executor());
  std::atomic<int> children_ended{0};
  std::atomic<bool> parent_ended{false};
  Job job;
  job.start(strand, "parent", [&] { return parent_of_three(strand, &children_ended, &parent_ended); });
  std::this_thread::sleep_for(30ms);
  job.stop();
  CHECK(parent_ended);
  CHECK(children_ended == 3);
}

struct Holders {  // touched on one strand only
  int inside = 0, most = 0, done = 0;
};

Task<void> hold(Semaphore* slots, Holders* h) {
  co_await slots->acquire();
  h->most = std::max(h->most, ++h->inside);
  co_await sleep_for(5ms);
  --h->inside;
  ++h->done;
  slots->release();
}

Task<void> six_holders(Strand strand, Holders* h) {
  Semaphore slots(2);
  TaskGroup group(strand);
  for (int i = 0; i < 6; ++i) group.spawn(hold(&slots, h), "holder");
  co_await group.join();
}

TEST_CASE("async: the Semaphore lets `limit` holders in at a time") {
  kube::ClientRuntime runtime(1);
  auto strand = make_strand(runtime.executor());
  Holders h;
  run_and_wait(strand, [&] { return six_holders(strand, &h); });
  const int most = h.most, done = h.done;
  CHECK(most == 2);
  CHECK(done == 6);
}

// Awaits an answer that only comes when the test gives it.
Task<void> await_late_answer(std::function<void(std::string)>* kept, std::atomic<bool>* asked,
                             std::atomic<bool>* resumed, std::string* got) {
  std::string cancelled = "cancelled";  // a named local (async.hpp, GCC 12)
  *got = co_await await_callback_or<std::string>(
      [kept, asked](std::function<void(std::string)> done) {
        *kept = std::move(done);
        *asked = true;
      },
      std::move(cancelled));
  *resumed = true;
  co_await throw_if_cancelled();
}

TEST_CASE("async: await_callback_or resumes a cancelled coroutine at once, the late answer is ignored") {
  kube::ClientRuntime runtime(1);
  std::function<void(std::string)> kept;
  std::atomic<bool> asked{false}, resumed{false};
  std::string got;
  Job job;
  job.start(make_strand(runtime.executor()), "waiter",
            [&] { return await_late_answer(&kept, &asked, &resumed, &got); });
  REQUIRE(eventually([&] { return asked.load(); }));
  std::this_thread::sleep_for(20ms);
  CHECK_FALSE(resumed);  // still waiting for its answer
  const auto began = std::chrono::steady_clock::now();
  job.stop();  // no answer ever came: the wait ends with on_cancel
  CHECK(std::chrono::steady_clock::now() - began < 2s);
  CHECK(resumed);
  CHECK(got == "cancelled");
  kept("too late");  // ignored, harmless
  std::this_thread::sleep_for(10ms);
  CHECK(got == "cancelled");
}

Task<void> ask_a_throwing_port(std::string* got) {
  auto answer = co_await await_callback<k8s::Expected<int>>(
      [](std::function<void(k8s::Expected<int>)>) { throw std::runtime_error("malformed object"); });
  *got = answer ? "value" : answer.error().message;
}

TEST_CASE("async: a port that throws instead of answering gives an error answer, not a lost coroutine") {
  kube::ClientRuntime runtime(1);
  std::string got;
  run_and_wait(make_strand(runtime.executor()), [&] { return ask_a_throwing_port(&got); });
  CHECK(got == "malformed object");
}

}  // namespace
}  // namespace fedmetrics::async

// The coroutine primitives every loop runs on (transport/async.hpp): a Job
// stops when told and only then returns, a TaskGroup's children are
// cancelled with their parent and waited for, a OneShot resumes each waiter
// on its own strand whichever thread sets it, the Semaphore bounds
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

// A loop that awaits a value set already and a short sleep, counting rounds.
Task<void> rounds(std::atomic<int>* count) {
  for (;;) {
    OneShot<int> set;
    set.set(1);
    auto one = set.wait();
    *count += co_await std::move(one);
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

// Ten values, each set by a thread of its own; whether every resumption was on `strand`.
Task<void> sum_answers(Strand strand, std::vector<std::thread>* answerers, std::atomic<int>* sum,
                       std::atomic<bool>* on_strand) {
  for (int i = 1; i <= 10; ++i) {
    OneShot<int> answer;
    answerers->emplace_back([answer, i] {
      std::this_thread::sleep_for(1ms);
      answer.set(i);
      answer.set(100);  // a second value is ignored
    });
    auto waiting = answer.wait();
    int v = co_await std::move(waiting);
    if (!strand.running_in_this_thread()) *on_strand = false;
    *sum += v;
  }
}

TEST_CASE("async: a OneShot resumes its waiter on the waiter's strand when another thread sets it") {
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

// Awaits a value that only comes when the test sets it.
Task<void> await_late_answer(OneShot<std::string> answer, std::atomic<bool>* asked, std::atomic<bool>* resumed,
                             std::string* got) {
  auto waiting = answer.wait();
  *asked = true;
  try {
    *got = co_await std::move(waiting);
  } catch (const std::exception& e) {
    if (is_cancellation(e)) *got = "cancelled";
  }
  *resumed = true;
  co_await throw_if_cancelled();
}

TEST_CASE("async: a OneShot waiter cancelled before the value leaves at once, the late value is ignored") {
  kube::ClientRuntime runtime(1);
  OneShot<std::string> answer;
  std::atomic<bool> asked{false}, resumed{false};
  std::string got;
  Job job;
  job.start(make_strand(runtime.executor()), "waiter",
            [&] { return await_late_answer(answer, &asked, &resumed, &got); });
  REQUIRE(eventually([&] { return asked.load(); }));
  std::this_thread::sleep_for(20ms);
  CHECK_FALSE(resumed);  // still waiting for its value
  const auto began = std::chrono::steady_clock::now();
  job.stop();  // no value ever came: the wait ends with the cancellation
  CHECK(std::chrono::steady_clock::now() - began < 2s);
  CHECK(resumed);
  CHECK(got == "cancelled");
  answer.set("too late");  // ignored, harmless
  std::this_thread::sleep_for(10ms);
  CHECK(got == "cancelled");
}

}  // namespace
}  // namespace fedmetrics::async

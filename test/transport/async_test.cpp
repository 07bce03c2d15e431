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

#include "fedmetrics/clusterclient/https_client.hpp"

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
  clusterclient::ClientRuntime runtime(1);
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

TEST_CASE("async: await_callback resumes on the coroutine's strand when another thread answers") {
  clusterclient::ClientRuntime runtime(2);
  auto strand = make_strand(runtime.executor());
  std::vector<std::thread> answerers;
  std::atomic<int> sum{0};
  std::atomic<bool> on_strand{true};
  run_and_wait(strand, [&]() -> Task<void> {
    for (int i = 1; i <= 10; ++i) {
      int v = co_await await_callback<int>([&, i](std::function<void(int)> done) {
        answerers.emplace_back([done, i] {
          std::this_thread::sleep_for(1ms);
          done(i);
          done(100);  // a second answer is ignored
        });
      });
      if (!strand.running_in_this_thread()) on_strand = false;
      sum += v;
    }
  });
  for (auto& t : answerers) t.join();
  CHECK(sum == 55);
  CHECK(on_strand);
}

TEST_CASE("async: a cancelled TaskGroup child stops at its next co_await; join waits for every child") {
  clusterclient::ClientRuntime runtime(1);
  auto strand = make_strand(runtime.executor());
  std::atomic<int> finished{0}, cancelled{0}, steps{0};
  auto child = [&](std::chrono::milliseconds work) -> Task<void> {
    try {
      co_await sleep_for(work);
      co_await throw_if_cancelled();
      ++steps;
      ++finished;
    } catch (const std::exception& e) {
      if (is_cancellation(e)) ++cancelled;
    }
  };
  run_and_wait(strand, [&]() -> Task<void> {
    TaskGroup group(strand);
    group.spawn(child(1ms), "quick");
    group.spawn(child(10s), "slow");
    group.spawn(child(10s), "slow");
    co_await sleep_for(50ms);
    CHECK(group.size() == 2);
    group.cancel();
    co_await group.join();
    CHECK(group.size() == 0);
  });
  CHECK(finished == 1);
  CHECK(cancelled == 2);
  CHECK(steps == 1);
}

TEST_CASE("async: a Job stopped while its TaskGroup joins cancels the children and still waits for them") {
  clusterclient::ClientRuntime runtime(1);
  auto strand = make_strand(runtime.executor());
  std::atomic<int> children_ended{0};
  std::atomic<bool> parent_ended{false};
  auto child = [&]() -> Task<void> {
    struct Count {
      std::atomic<int>* n;
      ~Count() { ++*n; }
    } count{&children_ended};
    co_await sleep_for(10s);
    co_await throw_if_cancelled();
  };
  Job job;
  job.start(strand, "parent", [&]() -> Task<void> {
    struct Mark {
      std::atomic<bool>* b;
      ~Mark() { *b = true; }
    } mark{&parent_ended};
    TaskGroup group(strand);
    for (int i = 0; i < 3; ++i) group.spawn(child(), "child");
    co_await group.join();
  });
  std::this_thread::sleep_for(30ms);
  job.stop();
  CHECK(parent_ended);
  CHECK(children_ended == 3);
}

TEST_CASE("async: the Semaphore lets `limit` holders in at a time") {
  clusterclient::ClientRuntime runtime(1);
  auto strand = make_strand(runtime.executor());
  int inside = 0, most = 0, done = 0;
  run_and_wait(strand, [&]() -> Task<void> {
    Semaphore slots(2);
    TaskGroup group(strand);
    for (int i = 0; i < 6; ++i)
      group.spawn(
          [](Semaphore* s, int* inside, int* most, int* done) -> Task<void> {
            co_await s->acquire();
            *most = std::max(*most, ++*inside);
            co_await sleep_for(5ms);
            --*inside;
            ++*done;
            s->release();
          }(&slots, &inside, &most, &done),
          "holder");
    co_await group.join();
  });
  CHECK(most == 2);
  CHECK(done == 6);
}

}  // namespace
}  // namespace fedmetrics::async

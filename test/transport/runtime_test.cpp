// The process runtime's start/stop order, its stop request and its
// termination signals (transport/runtime.hpp). The order with a server and
// a request in flight is in test/integration/tls_server_test.cpp.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fedmetrics/transport/runtime.hpp"

using fedmetrics::transport::Runtime;
using fedmetrics::transport::RuntimeOptions;
using fedmetrics::transport::Stage;

TEST_CASE("Runtime: starts in order, stops in reverse, each once, then joins its threads", "[transport][runtime]") {
  std::vector<std::string> log;
  std::shared_ptr<Runtime::Liveness> liveness;
  {
    Runtime runtime;
    liveness = runtime.liveness();
    const std::vector<std::pair<Stage, std::string>> components{{Stage::clients, "clients"},
                                                                {Stage::discovery, "members"},
                                                                {Stage::server, "server"},
                                                                {Stage::loops, "autoscaler"}};
    for (const auto& [stage, name] : components)
      runtime.start(
          stage, name, [&log, name = name] { log.push_back("start " + name); },
          [&log, name = name] { log.push_back("stop " + name); });
    CHECK(runtime.running() == std::vector<std::string>{"clients", "members", "server", "autoscaler"});
    CHECK(liveness->running);
    runtime.stop();
    runtime.stop();  // idempotent
    CHECK(runtime.running().empty());
    CHECK_FALSE(liveness->running);  // the threads are joined: nothing may be posted to them any more
  }                                  // and the destructor stops nothing twice
  CHECK(log == std::vector<std::string>{"start clients", "start members", "start server", "start autoscaler",
                                        "stop autoscaler", "stop server", "stop members", "stop clients"});
}

TEST_CASE("Runtime: a component of an earlier stage than one already started is refused", "[transport][runtime]") {
  std::vector<std::string> log;
  Runtime runtime;
  runtime.start(Stage::clients, "clients", {}, [&log] { log.push_back("stop clients"); });
  runtime.start(Stage::loops, "autoscaler", {}, [&log] { log.push_back("stop autoscaler"); });
  runtime.start(Stage::loops, "reloader", {}, [&log] { log.push_back("stop reloader"); });  // the same stage: fine
  bool started = false;
  CHECK_THROWS_AS(runtime.start(Stage::server, "server", [&started] { started = true; }, {}), std::logic_error);
  CHECK_FALSE(started);
  CHECK(runtime.running() == std::vector<std::string>{"clients", "autoscaler", "reloader"});
  runtime.stop();
  CHECK(log == std::vector<std::string>{"stop reloader", "stop autoscaler", "stop clients"});
}

TEST_CASE("Runtime: a start that fails propagates, and the owner's way out stops what started before it",
          "[transport][runtime]") {
  std::vector<std::string> log;
  {
    Runtime runtime;
    runtime.start(Stage::clients, "clients", {}, [&log] { log.push_back("stop clients"); });
    runtime.start(Stage::discovery, "members", {}, [&log] { log.push_back("stop members"); });
    CHECK_THROWS_WITH(runtime.start(
                          Stage::server, "server", [] { throw std::runtime_error("cannot listen"); },
                          [&log] { log.push_back("stop server"); }),
                      "cannot listen");
    CHECK(log.empty());  // its thrower may be a runtime thread, which must not wait for the stops
    CHECK(runtime.running() == std::vector<std::string>{"clients", "members"});
  }
  CHECK(log == std::vector<std::string>{"stop members", "stop clients"});
}

TEST_CASE("Runtime: a stop that throws does not keep the others running", "[transport][runtime]") {
  std::vector<std::string> log;
  {
    Runtime runtime;
    runtime.start(Stage::clients, "clients", {}, [&log] { log.push_back("stop clients"); });
    runtime.start(Stage::loops, "loop", {}, [] { throw std::runtime_error("stuck"); });
    runtime.start(Stage::loops, "reloader", {}, [&log] { log.push_back("stop reloader"); });
  }
  CHECK(log == std::vector<std::string>{"stop reloader", "stop clients"});
}

TEST_CASE("Runtime: request_stop ends wait, from another thread, and the first cause is kept", "[transport][runtime]") {
  Runtime runtime;
  std::thread failing([&runtime] {
    runtime.request_stop("--authentication-kubeconfig: no answer");
    runtime.request_stop("a second reason");
  });
  const auto cause = runtime.wait();
  failing.join();
  CHECK(cause.signal == 0);
  CHECK(cause.failure == "--authentication-kubeconfig: no answer");
  CHECK(runtime.wait().failure == cause.failure);  // and it stays
}

TEST_CASE("Runtime: SIGTERM ends wait instead of the process, and its stop ends the signal thread",
          "[transport][runtime]") {
  Runtime runtime(RuntimeOptions{1, true});
  REQUIRE(::kill(::getpid(), SIGTERM) == 0);  // blocked in every thread: the runtime's receives it
  const auto cause = runtime.wait();
  CHECK(cause.signal == SIGTERM);
  CHECK(cause.failure.empty());
  runtime.stop();  // returns: the receiver, waiting for a second signal, was woken and ended
  CHECK(runtime.running().empty());
}

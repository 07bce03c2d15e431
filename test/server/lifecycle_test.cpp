#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "server/lifecycle.hpp"

using fedmetrics::server::Lifecycle;

TEST_CASE("Lifecycle: starts in order, stops in reverse, each once", "[server][lifecycle]") {
  std::vector<std::string> log;
  {
    Lifecycle lifecycle;
    for (std::string name : {"clients", "members", "server", "autoscaler"})
      lifecycle.start(
          name, [&log, name] { log.push_back("start " + name); }, [&log, name] { log.push_back("stop " + name); });
    CHECK(lifecycle.running() == std::vector<std::string>{"clients", "members", "server", "autoscaler"});
    lifecycle.stop_all();
    lifecycle.stop_all();  // idempotent
    CHECK(lifecycle.running().empty());
  }  // and the destructor stops nothing twice
  CHECK(log == std::vector<std::string>{"start clients", "start members", "start server", "start autoscaler",
                                        "stop autoscaler", "stop server", "stop members", "stop clients"});
}

TEST_CASE("Lifecycle: a start that fails stops what started before it, and propagates", "[server][lifecycle]") {
  std::vector<std::string> log;
  Lifecycle lifecycle;
  lifecycle.start("clients", {}, [&log] { log.push_back("stop clients"); });
  lifecycle.start("members", {}, [&log] { log.push_back("stop members"); });
  CHECK_THROWS_WITH(
      lifecycle.start(
          "server", [] { throw std::runtime_error("cannot listen"); }, [&log] { log.push_back("stop server"); }),
      "cannot listen");
  CHECK(log == std::vector<std::string>{"stop members", "stop clients"});
  CHECK(lifecycle.running().empty());
}

TEST_CASE("Lifecycle: a stop that throws does not keep the others running", "[server][lifecycle]") {
  std::vector<std::string> log;
  {
    Lifecycle lifecycle;
    lifecycle.start("clients", {}, [&log] { log.push_back("stop clients"); });
    lifecycle.start("loop", {}, [] { throw std::runtime_error("stuck"); });
    lifecycle.start("reloader", {}, [&log] { log.push_back("stop reloader"); });
  }
  CHECK(log == std::vector<std::string>{"stop reloader", "stop clients"});
}

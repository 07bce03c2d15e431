// The leader election over HTTPS while the loop keeps the control plane
// busy, as at 10,000 FederatedHPAs: the loop's requests fill every
// connection of the control plane's client and queue behind them, and the
// Lease must still be renewed within its renew deadline; losing the Lease
// then cancels those requests in flight (serve's wiring), which all end at
// once.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include <boost/asio/post.hpp>

#include "fake_api_server.hpp"
#include "fedmetrics/controller/leader_election.hpp"
#include "fedmetrics/kubeclient/rest_control_plane.hpp"
#include "fedmetrics/transport/async.hpp"

using namespace fedmetrics;
using namespace std::chrono_literals;

namespace {

constexpr int kLoopRequests = 200;  // 25 times the client's 8 connections

// Waits for `done`, checked every 10 ms, for at most `limit`.
template <class Done>
bool wait_for(Done done, std::chrono::milliseconds limit = 10s) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= give_up) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// One read of a sync (the target's scale), counted when it ends.
async::Task<void> read_scale(std::shared_ptr<kubeclient::RestControlPlane> control_plane, std::atomic<int>& ended) {
  // Named: the port's coroutine holds its arguments by reference until awaited.
  const std::string namespace_name = "default";
  const autoscaler::CrossVersionObjectReference target{"Deployment", "nginx", "apps/v1"};
  auto reading = control_plane->get_scale(namespace_name, target);
  auto scale = co_await std::move(reading);
  (void)scale;
  ++ended;
}

// The loop: its syncs' requests, children of one leadership term on its
// strand, as the FederatedHPA loop runs them; losing the Lease cancels the term.
struct Loop {
  explicit Loop(kube::ClientRuntime& rt) : strand(async::make_strand(rt.executor())), term(strand) {}
  void start(const std::shared_ptr<kubeclient::RestControlPlane>& control_plane) {
    boost::asio::post(strand, [this, control_plane] {
      for (int i = 0; i < kLoopRequests; ++i) term.spawn(read_scale(control_plane, ended), "a sync's read");
    });
  }
  void cancel() {
    boost::asio::post(strand, [this] { term.cancel(); });
  }
  // Cancels what is left and waits for it (the test's end).
  void stop() {
    async::run_and_wait(strand, [this] { return finish(this); });
  }
  static async::Task<void> finish(Loop* self) {
    self->term.cancel();
    co_await self->term.join();
  }
  async::Strand strand;
  async::TaskGroup term;
  std::atomic<int> ended{0};
};

// A control plane whose every answer but a Lease's takes `delay`, the
// control-plane client of serve on it, and one replica's election with a
// short Lease (renewed every 200 ms, given up after 1 s without renewal).
struct Replica {
  explicit Replica(std::chrono::milliseconds delay) : server(delay) {
    control_plane = std::make_shared<kubeclient::RestControlPlane>(rt, server.kubeconfig(), 10s);
    controller::ElectionOptions election;
    election.identity = "replica-a";
    election.lease_duration = 2s;
    election.renew_deadline = 1s;
    election.retry_period = 200ms;
    election.on_stopped_leading = [this] {
      ++stepped_down;
      loop.cancel();
    };
    elector = std::make_unique<controller::LeaderElector>(
        rt.executor(), std::make_shared<kubeclient::RestLeaseClient>(control_plane), election);
    elector->start();
    REQUIRE(wait_for([this] { return elector->leading(); }));
  }
  ~Replica() {
    loop.stop();
    elector->stop();
  }
  testing::FakeApiServer server;
  kube::ClientRuntime rt{2};
  std::shared_ptr<kubeclient::RestControlPlane> control_plane;
  Loop loop{rt};
  std::atomic<int> stepped_down{0};
  std::unique_ptr<controller::LeaderElector> elector;
};

}  // namespace

TEST_CASE("RestLeaseClient: the Lease is renewed while the loop's requests fill the control plane's connections",
          "[integration][kubeclient]") {
  Replica replica(5s);  // 200 reads, 8 at a time, 5 s each: the last would wait 125 s
  replica.loop.start(replica.control_plane);
  REQUIRE(wait_for([&] { return replica.server.received() == 8; }));
  // Five renewal rounds (a GET and a PUT each) with every connection of
  // the loop's client busy and 192 reads queued for one.
  const int before = replica.server.lease_requests();
  REQUIRE(wait_for([&] { return replica.server.lease_requests() >= before + 10; }));
  CHECK(replica.stepped_down == 0);
  CHECK(replica.elector->leading());
  CHECK(replica.server.lease_holder("fedmetrics-autoscaler") == "replica-a");
  CHECK(replica.loop.ended == 0);  // still queued: the loop's client was saturated all along
}

TEST_CASE("RestLeaseClient: losing the Lease cancels the loop's requests in flight, which end at once",
          "[integration][kubeclient]") {
  Replica replica(30s);  // no read is answered during the test
  replica.loop.start(replica.control_plane);
  REQUIRE(wait_for([&] { return replica.server.received() == 8; }));
  const auto taken = std::chrono::steady_clock::now();
  replica.server.take_lease("fedmetrics-autoscaler", "replica-b");
  REQUIRE(wait_for([&] { return replica.stepped_down == 1; }));
  // Cancelled: on the wire or queued for a connection, each ends now, not
  // by its 10 s deadline.
  REQUIRE(wait_for([&] { return replica.loop.ended == kLoopRequests; }, 5s));
  CHECK(std::chrono::steady_clock::now() - taken < 5s);
  CHECK(replica.server.received() == 8);  // none of the queued reads went out after the cancellation
  const auto stats = replica.control_plane->client()->stats();
  CHECK(stats.in_flight == 0);
  CHECK(stats.open_connections == 0);
  CHECK_FALSE(replica.elector->leading());
}

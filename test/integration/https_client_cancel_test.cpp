// Requests cancelled in flight by the coroutines that await them, as losing
// the Lease cancels the loop's syncs and a stop cancels everything: the
// cancellation comes from the awaiting coroutine's strand while the request
// runs on the client's, at any moment of it. Every request ends (at once
// when it was still waiting for a connection or for its answer), none is
// sent after its cancellation, the connections it held are freed, and the
// client goes on serving others.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "fake_api_server.hpp"
#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/transport/async.hpp"

using namespace fedmetrics;
using namespace fedmetrics::kube;
using namespace std::chrono_literals;

namespace {

struct Outcomes {
  std::atomic<int> answered{0};  // the server's answer came back to its caller
  std::atomic<int> failed{0};    // an error instead (a cancelled request's)
};

// One request of a sync, as the control-plane ports make them.
async::Task<void> ask(std::shared_ptr<HttpsClient> client, Outcomes& outcomes) {
  OutgoingRequest get;
  get.target = "/apis/apps/v1/namespaces/default/deployments/nginx/scale";
  auto asking = client->request(std::move(get), std::chrono::steady_clock::now() + 30s);
  auto result = co_await std::move(asking);
  if (std::holds_alternative<HttpReply>(result)) ++outcomes.answered;
  else ++outcomes.failed;
}

// Keeps the calling strand busy (as a sync computing a decision does) until
// `done`, checked every millisecond, for at most 10 s.
template <class Done>
void hold_until(Done done) {
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (!done() && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(1ms);
}

// `count` requests as children of a group on `strand`, cancelled together
// once `ready` holds, then waited for.
template <class Ready>
async::Task<void> cancel_when(async::Strand strand, std::shared_ptr<HttpsClient> client, int count, Outcomes& outcomes,
                              Ready ready) {
  async::TaskGroup group(strand);
  for (int i = 0; i < count; ++i) group.spawn(ask(client, outcomes), "a request");
  // Every child runs up to its request before this goes on.
  co_await async::sleep_for(0ms);
  hold_until(ready);
  group.cancel();
  co_await group.join();
}

// One more request, awaited from `strand`, answered: the client still serves.
void require_serves(const async::Strand& strand, const std::shared_ptr<HttpsClient>& client) {
  Outcomes outcomes;
  async::run_and_wait(strand, [&] { return ask(client, outcomes); });
  REQUIRE(outcomes.answered == 1);
}

}  // namespace

// The answers are back on the client's strand and on their way to their
// callers, whose strand is busy, as is the client's (a large answer being
// decoded) when the cancellation comes: it reaches each request only after
// its caller has its answer and has gone on.
async::Task<void> cancel_as_answers_arrive(async::Strand strand, std::shared_ptr<HttpsClient> client, int count,
                                           Outcomes& outcomes, const testing::FakeApiServer& server) {
  async::TaskGroup group(strand);
  for (int i = 0; i < count; ++i) group.spawn(ask(client, outcomes), "a request");
  co_await async::sleep_for(0ms);  // every child runs up to its request
  hold_until([&] {
    const auto stats = client->stats();
    return server.answered() == count && stats.idle_connections == stats.open_connections;
  });
  auto client_busy = std::make_shared<std::atomic<bool>>(false);
  client->schedule(0ms, [client_busy, count, &outcomes] {
    *client_busy = true;
    hold_until([count, &outcomes] { return outcomes.answered + outcomes.failed == count; });
  });
  hold_until([client_busy] { return client_busy->load(); });
  group.cancel();
  co_await group.join();
}

TEST_CASE("HttpsClient: requests cancelled by their owner as their answers arrive end with their answers",
          "[integration][kube]") {
  testing::FakeApiServer server;
  ClientRuntime rt(2);  // one strand is held on one thread while the other runs
  auto client = std::make_shared<HttpsClient>(rt, server.endpoint());
  auto strand = async::make_strand(rt.executor());
  constexpr int kRequests = 64;
  Outcomes outcomes;
  async::run_and_wait(strand, [&] { return cancel_as_answers_arrive(strand, client, kRequests, outcomes, server); });
  CHECK(outcomes.answered == kRequests);
  CHECK(client->stats().in_flight == 0);
  require_serves(strand, client);
}

TEST_CASE("HttpsClient: requests cancelled while they wait for a connection or an answer end at once",
          "[integration][kube]") {
  testing::FakeApiServer server(30s);  // no answer during the test
  ClientRuntime rt(2);
  auto client = std::make_shared<HttpsClient>(rt, server.endpoint());  // at most 8 connections
  auto strand = async::make_strand(rt.executor());
  Outcomes outcomes;
  // 8 requests on the wire, 32 waiting for a connection.
  auto on_the_wire = [&] { return server.received() == 8; };
  const auto began = std::chrono::steady_clock::now();
  async::run_and_wait(strand, [&] { return cancel_when(strand, client, 40, outcomes, on_the_wire); });
  CHECK(std::chrono::steady_clock::now() - began < 5s);  // not their 30 s deadline
  CHECK(outcomes.failed == 40);
  const auto stats = client->stats();
  CHECK(stats.in_flight == 0);
  CHECK(stats.open_connections == 0);  // the connections of cancelled exchanges are closed, their places freed
  CHECK(server.received() == 8);       // none of the waiting ones was sent after its cancellation
  server.set_delay(0ms);
  require_serves(strand, client);
}

// The member-cluster client under load: N GETs of one member's pod metrics
// list, C of them in flight at a time (closed loop), through one HttpsClient
// with its keep-alive pool. Prints requests per second, p50/p99 latency and
// how many TLS handshakes the pool made. bench/run.sh runs it against a
// simulated member next to curl and wrk aimed straight at the same member.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/kube/kubeconfig.hpp"

using namespace fedmetrics::kube;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kHelp = R"(client_bench: the member-cluster client (HttpsClient) against one member.

Usage: fedmetrics_client_bench --kubeconfig FILE [options]

Sends N GET /apis/metrics.k8s.io/v1beta1/namespaces/NS/pods to one member,
C requests in flight at a time, through one HttpsClient (one keep-alive pool),
after a warm-up that is not counted. Prints one line:

  client_bench member=M requests=N concurrency=C rps=R p50_ms=A p99_ms=B tls_handshakes=H failures=F

Members come from a kubeconfig, one context per member (Karmada's
members.config, or the DIR/members.kubeconfig that `fedmetrics sim --out-dir
DIR` writes). It starts nothing itself: start a world first, e.g.

  build/fedmetrics sim --world bench/worlds/three.yaml --out-dir /tmp/w3 &
  build/bench/fedmetrics_client_bench --kubeconfig /tmp/w3/members.kubeconfig --context member3

Options:
  --kubeconfig FILE      kubeconfig with the member (required)
  --context NAME         the member's context (default: the file's first context)
  --namespace NS         namespace whose pods are listed (default: bench)
  -n N                   measured requests (default: 5000)
  -c C                   requests in flight (default: 16)
  --max-connections K    the client's pool bound (default: C; fedmetrics serve uses 8)
  --threads T            client I/O threads (default: 1, as fedmetrics serve's member client)
  --warmup W             requests sent first and not counted (default: 200)
  --timeout-ms MS        deadline of each request (default: 10000)
  -h, --help             this text
)";

struct Options {
  std::string kubeconfig;
  std::string context;
  std::string ns = "bench";
  long requests = 5000;
  long concurrency = 16;
  long max_connections = 0;
  long threads = 1;
  long warmup = 200;
  long timeout_ms = 10000;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "client_bench: %s (see --help)\n", message.c_str());
  std::exit(2);
}

long positive(std::string_view flag, const char* text, long min = 1) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < min)
    usage_error(std::string(flag) + ": expected an integer >= " + std::to_string(min));
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    }
    if (i + 1 >= argc) usage_error(std::string(a) + ": needs a value");
    const char* v = argv[++i];
    if (a == "--kubeconfig") o.kubeconfig = v;
    else if (a == "--context") o.context = v;
    else if (a == "--namespace") o.ns = v;
    else if (a == "-n") o.requests = positive(a, v);
    else if (a == "-c") o.concurrency = positive(a, v);
    else if (a == "--max-connections") o.max_connections = positive(a, v);
    else if (a == "--threads") o.threads = positive(a, v);
    else if (a == "--warmup") o.warmup = positive(a, v, 0);
    else if (a == "--timeout-ms") o.timeout_ms = positive(a, v);
    else usage_error("unknown option " + std::string(a));
  }
  if (o.kubeconfig.empty()) usage_error("--kubeconfig is required");
  if (o.max_connections == 0) o.max_connections = o.concurrency;
  return o;
}

// A closed loop: `concurrency` chains, each sending its next request when the
// previous one completes, until `total` were sent. Latencies in microseconds.
struct Run {
  HttpsClient& client;
  std::string target;
  std::chrono::milliseconds timeout;
  long total;
  std::vector<double> latencies_us;
  std::atomic<long> next{0};
  std::atomic<long> failures{0};
  std::mutex mutex;
  std::condition_variable cv;
  long done = 0;
  std::string first_error;

  Run(HttpsClient& c, std::string t, std::chrono::milliseconds to, long n)
      : client(c), target(std::move(t)), timeout(to), total(n), latencies_us(static_cast<std::size_t>(n)) {}

  void send() {
    long i = next.fetch_add(1);
    if (i >= total) return;
    auto start = Clock::now();
    client.get(target, start + timeout, [this, i, start](HttpResult result) {
      latencies_us[static_cast<std::size_t>(i)] =
          std::chrono::duration<double, std::micro>(Clock::now() - start).count();
      std::string error;
      if (auto* reply = std::get_if<HttpReply>(&result)) {
        if (reply->status != 200 || reply->body.empty()) error = "HTTP " + std::to_string(reply->status);
      } else {
        error = std::get<Error>(result).message;
      }
      if (!error.empty()) failures.fetch_add(1);
      send();  // the chain's next request, before this one counts as done
      std::lock_guard lock(mutex);
      if (!error.empty() && first_error.empty()) first_error = error;
      if (++done == total) cv.notify_all();
    });
  }

  double wall_seconds(long concurrency) {
    auto start = Clock::now();
    for (long c = 0; c < std::min(concurrency, total); ++c) send();
    std::unique_lock lock(mutex);
    cv.wait(lock, [this] { return done == total; });
    return std::chrono::duration<double>(Clock::now() - start).count();
  }
};

double percentile(std::vector<double> sorted, double p) {
  if (sorted.empty()) return 0;
  auto idx = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(idx, sorted.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  std::vector<std::string> only;
  if (!o.context.empty()) only.push_back(o.context);
  auto endpoints = load_kubeconfig(o.kubeconfig, only);
  if (!endpoints) {
    std::fprintf(stderr, "client_bench: %s\n", endpoints.error().message.c_str());
    return 1;
  }
  if (endpoints->empty()) {
    std::fprintf(stderr, "client_bench: no context %s in %s\n", o.context.c_str(), o.kubeconfig.c_str());
    return 1;
  }
  ClusterEndpoint endpoint = endpoints->front();

  ClientRuntime runtime(static_cast<unsigned>(o.threads));
  ClientOptions options;
  options.max_connections = static_cast<std::size_t>(o.max_connections);
  HttpsClient client(runtime, endpoint, options);
  const std::string target = "/apis/metrics.k8s.io/v1beta1/namespaces/" + o.ns + "/pods";
  const std::chrono::milliseconds timeout(o.timeout_ms);

  if (o.warmup > 0) {
    Run warm(client, target, timeout, o.warmup);
    warm.wall_seconds(o.concurrency);
    if (warm.failures.load() == warm.total) {
      std::fprintf(stderr, "client_bench: every warm-up request to %s (%s) failed: %s\n", endpoint.name.c_str(),
                   endpoint.server.c_str(), warm.first_error.c_str());
      return 1;
    }
  }

  Run run(client, target, timeout, o.requests);
  double seconds = run.wall_seconds(o.concurrency);
  std::vector<double> sorted = run.latencies_us;
  std::sort(sorted.begin(), sorted.end());
  auto stats = client.stats();

  std::printf(
      "client_bench member=%s requests=%ld concurrency=%ld max_connections=%ld rps=%.1f p50_ms=%.3f p99_ms=%.3f "
      "tls_handshakes=%llu failures=%ld\n",
      endpoint.name.c_str(), o.requests, o.concurrency, o.max_connections, static_cast<double>(o.requests) / seconds,
      percentile(sorted, 0.50) / 1000.0, percentile(sorted, 0.99) / 1000.0,
      static_cast<unsigned long long>(stats.tls_handshakes), run.failures.load());
  if (run.failures.load() > 0) {
    std::fprintf(stderr, "client_bench: %ld of %ld requests failed, first: %s\n", run.failures.load(), o.requests,
                 run.first_error.c_str());
    return 1;
  }
  return 0;
}

// The wire library's hot paths, as the aggregator exercises them for every
// member response: decoding a PodMetricsList (quantities, times, durations),
// encoding the merged list, and Quantity parse/print/add on their own.
// Prints the median of several runs, in nanoseconds per operation and MB/s.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "fedmetrics/k8s/metrics_list_items.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"

using namespace fedmetrics::k8s;

namespace {

// Runs `body` `iterations` times per sample; returns the median ns per iteration.
double median_ns(int samples, int iterations, const std::function<void()>& body) {
  std::vector<double> per_op;
  for (int s = 0; s < samples; ++s) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) body();
    auto elapsed = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    per_op.push_back(elapsed / iterations);
  }
  std::sort(per_op.begin(), per_op.end());
  return per_op[per_op.size() / 2];
}

std::string pod_metrics_list(int pods) {
  std::vector<PodMetrics> items;
  for (int i = 0; i < pods; ++i) {
    PodMetrics p;
    p.metadata.name = "web-" + std::to_string(i);
    p.metadata.namespace_name = "default";
    p.metadata.labels = {{"app", "web"}, {"pod-template-hash", "7d9c5b"}};
    p.timestamp = *parse_time("2026-08-22T10:15:20Z");
    p.window = std::chrono::milliseconds(15021);
    p.containers.push_back(
        {"nginx",
         {{"cpu", Quantity::from_nanos(2318451 + i)}, {"memory", *Quantity::parse(std::to_string(14536 + i) + "Ki")}}});
    items.push_back(std::move(p));
  }
  return pod_metrics_list_to_json(items).dump();
}

// The same list as metrics-server writes it: Go's field order (metadata
// first, containers last), which the transcoder cannot copy.
std::string go_pod_metrics_list(int pods) {
  std::string out = R"({"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[)";
  for (int i = 0; i < pods; ++i) {
    if (i) out += ',';
    out += R"({"metadata":{"name":"web-)" + std::to_string(i) +
           R"(","namespace":"default","creationTimestamp":"2026-08-22T10:15:31Z","labels":{"app":"web",)"
           R"("pod-template-hash":"7d9c5b"}},"timestamp":"2026-08-22T10:15:20Z","window":"15.021s",)"
           R"("containers":[{"name":"nginx","usage":{"cpu":")" +
           std::to_string(2318451 + i) + R"(n","memory":")" + std::to_string(14536 + i) + R"(Ki"}}]})";
  }
  return out + "]}";
}

// The merged answer of bench/run.sh: pods of one or two containers, labels,
// and the query-from-cluster annotation the aggregator adds to each.
std::vector<PodMetrics> merged_pods(int pods) {
  std::vector<PodMetrics> items;
  const Timestamp now = *parse_time("2026-11-23T08:00:23Z");
  for (int i = 0; i < pods; ++i) {
    PodMetrics p;
    p.metadata.name = (i % 5 < 2 ? "api-7c45cffc96-" : "web-68fc4c95d5-") + std::to_string(10000 + i);
    p.metadata.namespace_name = "bench";
    p.metadata.labels = {{"app", i % 5 < 2 ? "api" : "web"}, {"pod-template-hash", "7c45cffc96"}};
    p.metadata.annotations = {{"resource.karmada.io/query-from-cluster", "member" + std::to_string(1 + i % 10)}};
    p.metadata.creation_timestamp = now;
    p.timestamp = now;
    p.window = std::chrono::seconds(15);
    p.containers.push_back({"web",
                            {{"cpu", Quantity::from_nanos(101000000 + i * 1000)},
                             {"memory", Quantity::from_value((8 << 20) + i * 4096, QuantityFormat::BinarySI)}}});
    if (i % 5 < 2) p.containers.push_back({"envoy", {{"cpu", Quantity{}}, {"memory", Quantity{}}}});
    items.push_back(std::move(p));
  }
  return items;
}

}  // namespace

int main() {
  volatile std::size_t sink = 0;
  std::printf("%-44s %14s %12s\n", "operation", "median ns/op", "MB/s");

  const char* inputs[] = {"2318451n", "14536Ki", "1500m", "1.5Gi", "300e6"};
  double parse = median_ns(9, 200000,
                           [&] {
                             for (const char* s : inputs) sink = sink + (Quantity::parse(s)->nanos() != 0);
                           }) /
                 5;
  std::printf("%-44s %14.1f %12s\n", "Quantity::parse", parse, "-");

  std::vector<Quantity> parsed;
  for (const char* s : inputs) parsed.push_back(*Quantity::parse(s));
  double print = median_ns(9, 200000,
                           [&] {
                             for (const auto& q : parsed) sink = sink + (q.to_string().size());
                           }) /
                 5;
  std::printf("%-44s %14.1f %12s\n", "Quantity::to_string", print, "-");

  Quantity a = *Quantity::parse("20468Ki"), b = *Quantity::parse("30000Ki");
  double add = median_ns(9, 1000000, [&] { sink = sink + (a.plus(b)->is_zero()); });
  std::printf("%-44s %14.1f %12s\n", "Quantity::plus", add, "-");

  const Timestamp stamp = *parse_time("2026-11-23T08:00:23Z");
  double time_ns = median_ns(9, 200000, [&] { sink = sink + format_time(stamp).size(); });
  std::printf("%-44s %14.1f %12s\n", "format_time", time_ns, "-");
  double duration_ns = median_ns(9, 200000,
                                 [&] {
                                   sink = sink + format_duration(std::chrono::seconds(15)).size() +
                                          format_duration(std::chrono::milliseconds(15021)).size();
                                 }) /
                       2;
  std::printf("%-44s %14.1f %12s\n", "format_duration", duration_ns, "-");

  {
    const auto merged = merged_pods(100);
    const std::size_t bytes = encode_pod_metrics_list(merged).size();
    double ns = median_ns(9, 50, [&] { sink = sink + (encode_pod_metrics_list(merged).size()); });
    std::printf("%-44s %14.0f %12.1f\n", "encode merged answer (100 pods, bench/run.sh)", ns, bytes / ns * 1e3);
  }

  for (int pods : {100, 1000}) {
    std::string body = pod_metrics_list(pods);
    double decode = median_ns(7, 20, [&] {
      auto doc = parse_document(body);
      auto list = pod_metrics_list_from_json(*doc);
      sink = sink + (list->size());
    });
    char name[64];
    std::snprintf(name, sizeof name, "decode PodMetricsList (%d pods, %zu KiB)", pods, body.size() / 1024);
    std::printf("%-44s %14.0f %12.1f\n", name, decode, body.size() / decode * 1e3);
    // The client's path: straight from the text, no document tree.
    double fast = median_ns(7, 20, [&] { sink = sink + (try_decode_pod_metrics_list(body)->size()); });
    std::snprintf(name, sizeof name, "decode PodMetricsList fast (%d pods)", pods);
    std::printf("%-44s %14.0f %12.1f\n", name, fast, body.size() / fast * 1e3);

    // What nlohmann's lexer alone costs (no values made): the floor of any
    // decoder on its parser, against the subset reader under the fast paths.
    double accept = median_ns(7, 20, [&] { sink = sink + nlohmann::json::accept(body); });
    std::snprintf(name, sizeof name, "nlohmann lexer alone, accept (%d pods)", pods);
    std::printf("%-44s %14.0f %12.1f\n", name, accept, body.size() / accept * 1e3);
    // A member's answer made ready for a merged list: decoded then each item
    // encoded (the reference path), or transcoded in one pass (the server's).
    const ItemPreparation preparation{"resource.karmada.io/query-from-cluster", "member1", {}};
    double prepared = median_ns(7, 20, [&] {
      sink = sink + encode_pod_metrics_items(*try_decode_pod_metrics_list(body), preparation).bytes.size();
    });
    std::snprintf(name, sizeof name, "decode + encode list items (%d pods)", pods);
    std::printf("%-44s %14.0f %12.1f\n", name, prepared, body.size() / prepared * 1e3);
    double transcoded =
        median_ns(7, 20, [&] { sink = sink + transcode_pod_metrics_list(body, preparation)->bytes.size(); });
    std::snprintf(name, sizeof name, "transcode to list items (%d pods)", pods);
    std::printf("%-44s %14.0f %12.1f\n", name, transcoded, body.size() / transcoded * 1e3);
    const std::string go_body = go_pod_metrics_list(pods);
    double go_transcoded =
        median_ns(7, 20, [&] { sink = sink + transcode_pod_metrics_list(go_body, preparation)->bytes.size(); });
    std::snprintf(name, sizeof name, "transcode, Go's field order (%d pods)", pods);
    std::printf("%-44s %14.0f %12.1f\n", name, go_transcoded, go_body.size() / go_transcoded * 1e3);

    auto items = *pod_metrics_list_from_json(*parse_document(body));
    double encode = median_ns(7, 20, [&] { sink = sink + (pod_metrics_list_to_json(items).dump().size()); });
    std::snprintf(name, sizeof name, "encode PodMetricsList (%d pods)", pods);
    std::printf("%-44s %14.0f %12.1f\n", name, encode, body.size() / encode * 1e3);
    // The server's path: straight to text, no document tree.
    double direct = median_ns(7, 20, [&] { sink = sink + (encode_pod_metrics_list(items).size()); });
    std::snprintf(name, sizeof name, "encode PodMetricsList direct (%d pods)", pods);
    std::printf("%-44s %14.0f %12.1f\n", name, direct, body.size() / direct * 1e3);
  }
  return sink == 42 ? 1 : 0;
}

#include "fedmetrics/promsource/prometheus_answer.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

namespace fedmetrics::promsource {

using k8s::Error;
using k8s::Expected;
using nlohmann::json;

namespace {

// Reads the envelope {"status","data","errorType","error"}: data on success,
// Prometheus' own error otherwise.
Expected<json> envelope(std::string_view body, const AnswerLimits& limits) {
  if (body.size() > limits.max_bytes) {
    return Error{"answer of " + std::to_string(body.size()) + " bytes is above the limit of " +
                 std::to_string(limits.max_bytes)};
  }
  json doc = json::parse(body.begin(), body.end(), nullptr, false);
  if (doc.is_discarded()) return Error{"answer is not JSON"};
  if (!doc.is_object()) return Error{"answer is not a JSON object"};
  const auto status = doc.find("status");
  if (status == doc.end() || !status->is_string()) return Error{"answer has no status"};
  if (*status != "success") {
    std::string type = "unknown";
    std::string message;
    if (auto t = doc.find("errorType"); t != doc.end() && t->is_string()) type = t->get<std::string>();
    if (auto e = doc.find("error"); e != doc.end() && e->is_string()) message = e->get<std::string>();
    return Error{"Prometheus answered " + status->dump() + " (" + type + "): " + message};
  }
  auto data = doc.find("data");
  if (data == doc.end()) return Error{"answer has no data"};
  return std::move(*data);
}

// Go's strconv.ParseFloat on the sample string ("1.5", "NaN", "+Inf", "1e3").
std::optional<double> parse_float(const json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.empty() || s.size() > 64) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return d;
}

// [<unix seconds, float>, "<value>"]
Expected<Sample> read_pair(const json& pair, Sample sample, const std::string& where) {
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number()) {
    return Error{where + ": expected [<unix time>, \"<value>\"]"};
  }
  const double seconds = pair[0].get<double>();
  // Prometheus keeps milliseconds (model.Time); bounded to what a Timestamp holds.
  if (!std::isfinite(seconds) || std::fabs(seconds) > 9.0e9) return Error{where + ": timestamp out of range"};
  sample.timestamp = k8s::Timestamp{std::chrono::milliseconds{std::llround(seconds * 1000)}};
  auto value = parse_float(pair[1]);
  if (!value) return Error{where + ": sample value is not a number"};
  sample.value = *value;
  return sample;
}

Expected<k8s::Labels> read_labels(const json& object, const std::string& where) {
  if (!object.is_object()) return Error{where + ": expected an object of labels"};
  k8s::Labels labels;
  for (const auto& [k, v] : object.items()) {
    if (!v.is_string()) return Error{where + "." + k + ": expected a string"};
    labels.emplace(k, v.get<std::string>());
  }
  return labels;
}

// metav1.ParseToLabelSelector (apimachinery pkg/apis/meta/v1/helpers.go),
// which the adapter writes as metric.selector: = and == as matchLabels, in,
// notin, exists and !exists as matchExpressions (values sorted), and any
// other operator an error.
Expected<json> selector_object(const k8s::LabelSelector& selector) {
  json match_labels = json::object();
  json match_expressions = json::array();
  for (const auto& r : selector.requirements()) {
    std::string op;
    switch (r.op) {
      case k8s::SelectorOperator::Equals:
      case k8s::SelectorOperator::DoubleEquals:
        if (r.values.size() != 1) return Error{"equals operator must have exactly one value"};
        match_labels[r.key] = r.values.front();
        continue;
      case k8s::SelectorOperator::In: op = "In"; break;
      case k8s::SelectorOperator::NotIn: op = "NotIn"; break;
      case k8s::SelectorOperator::Exists: op = "Exists"; break;
      case k8s::SelectorOperator::DoesNotExist: op = "DoesNotExist"; break;
      case k8s::SelectorOperator::GreaterThan: return Error{"\"gt\" isn't supported in label selectors"};
      case k8s::SelectorOperator::LessThan: return Error{"\"lt\" isn't supported in label selectors"};
      case k8s::SelectorOperator::NotEquals: return Error{"\"!=\" is not a valid label selector operator"};
    }
    json expression = {{"key", r.key}, {"operator", op}};
    if (!r.values.empty()) expression["values"] = r.values;
    match_expressions.push_back(std::move(expression));
  }
  json out = json::object();
  if (!match_labels.empty()) out["matchLabels"] = std::move(match_labels);
  if (!match_expressions.empty()) out["matchExpressions"] = std::move(match_expressions);
  return out;
}

}  // namespace

Expected<QueryResult> parse_query_answer(std::string_view body, const AnswerLimits& limits) {
  auto data = envelope(body, limits);
  if (!data) return data.error();
  if (!data->is_object()) return Error{"data: expected an object"};
  auto type = data->find("resultType");
  auto result = data->find("result");
  if (type == data->end() || !type->is_string() || result == data->end()) {
    return Error{"data: expected resultType and result"};
  }
  QueryResult out;
  out.result_type = type->get<std::string>();
  if (out.result_type == "scalar") {
    auto sample = read_pair(*result, Sample{}, "data.result");
    if (!sample) return sample.error();
    out.samples.push_back(std::move(*sample));
    return out;
  }
  if (out.result_type != "vector") {
    return Error{"unexpected results from prometheus: expected vector, got " + out.result_type};
  }
  if (!result->is_array()) return Error{"data.result: expected a list"};
  if (result->size() > limits.max_samples) {
    return Error{"answer of " + std::to_string(result->size()) + " samples is above the limit of " +
                 std::to_string(limits.max_samples)};
  }
  for (std::size_t i = 0; i < result->size(); ++i) {
    const std::string where = "data.result[" + std::to_string(i) + "]";
    const json& item = (*result)[i];
    if (!item.is_object() || !item.contains("metric") || !item.contains("value")) {
      return Error{where + ": expected metric and value"};
    }
    auto labels = read_labels(item["metric"], where + ".metric");
    if (!labels) return labels.error();
    auto sample = read_pair(item["value"], Sample{std::move(*labels), {}, 0}, where + ".value");
    if (!sample) return sample.error();
    out.samples.push_back(std::move(*sample));
  }
  return out;
}

Expected<std::vector<Series>> parse_series_answer(std::string_view body, const AnswerLimits& limits) {
  auto data = envelope(body, limits);
  if (!data) return data.error();
  if (!data->is_array()) return Error{"data: expected a list of series"};
  if (data->size() > limits.max_samples) {
    return Error{"answer of " + std::to_string(data->size()) + " series is above the limit of " +
                 std::to_string(limits.max_samples)};
  }
  std::vector<Series> out;
  for (std::size_t i = 0; i < data->size(); ++i) {
    auto labels = read_labels((*data)[i], "data[" + std::to_string(i) + "]");
    if (!labels) return labels.error();
    Series s;
    if (auto n = labels->find("__name__"); n != labels->end()) {
      s.name = n->second;
      labels->erase(n);
    }
    s.labels = std::move(*labels);
    out.push_back(std::move(s));
  }
  return out;
}

Expected<k8s::Quantity> sample_quantity(double value, k8s::QuantityFormat format) {
  if (std::isnan(value)) return k8s::Quantity::from_value(0, format);
  const double milli = value * 1000.0;
  // Go's int64(float) truncates toward zero.
  if (!std::isfinite(milli) || milli >= 9.2233720368547758e18 || milli <= -9.2233720368547758e18) {
    return Error{"sample value " + std::to_string(value) + " is out of the range of a quantity"};
  }
  return k8s::Quantity::from_milli(static_cast<std::int64_t>(milli), format);
}

Expected<std::vector<k8s::MetricValue>> custom_metric_values(
    const QueryResult& result, const ResourceInfo& info, std::string_view resource_label,
    std::string_view namespace_name, const std::vector<std::string>& names, std::string_view metric,
    const k8s::LabelSelector& metric_selector, k8s::Timestamp now) {
  if (result.result_type != "vector") {
    return Error{"unexpected results from prometheus: expected vector, got " + result.result_type};
  }
  // MatchValuesToNames (series_registry.go): the last sample of a name wins.
  std::map<std::string, double, std::less<>> by_name;
  for (const auto& s : result.samples) {
    auto it = s.metric.find(resource_label);
    by_name[it == s.metric.end() ? std::string{} : it->second] = s.value;
  }
  json selector_json = nullptr;
  if (!metric_selector.empty()) {
    auto object = selector_object(metric_selector);
    if (!object) return object.error();
    selector_json = std::move(*object);
  }
  std::vector<k8s::MetricValue> out;
  for (const auto& name : names) {
    auto it = by_name.find(name);
    if (it == by_name.end()) continue;
    auto quantity = sample_quantity(it->second);
    if (!quantity) return quantity.error().at(name);
    k8s::MetricValue v;
    // helpers.ReferenceFor (custom-metrics-apiserver): apiVersion is
    // group + "/" + version, so "/v1" for the core group.
    v.described_object.kind = info.kind;
    v.described_object.namespace_name = std::string(namespace_name);
    v.described_object.name = name;
    v.described_object.api_version = info.group_resource.group + "/" + info.version;
    v.metric_name = std::string(metric);
    v.metric_selector = selector_json;
    v.timestamp = now;
    v.value = std::move(*quantity);
    out.push_back(std::move(v));
  }
  return out;
}

Expected<std::vector<k8s::ExternalMetricValue>> external_metric_values(const QueryResult& result,
                                                                       std::string_view metric) {
  std::vector<k8s::ExternalMetricValue> out;
  for (const auto& s : result.samples) {
    auto quantity = sample_quantity(s.value);
    if (!quantity) return quantity.error();
    out.push_back({std::string(metric), s.metric, s.timestamp, std::nullopt, std::move(*quantity)});
  }
  return out;
}

namespace {

// runQuery of pkg/resourceprovider/provider.go: the samples of each object,
// by its resource label, NaN and negative values as 0.
Expected<std::map<std::string, std::vector<Sample>, std::less<>>> by_object(const QueryResult& result,
                                                                            std::string_view label) {
  if (result.result_type != "vector") {
    return Error{"invalid or empty value of non-vector type (" + result.result_type + ") returned"};
  }
  std::map<std::string, std::vector<Sample>, std::less<>> out;
  for (Sample s : result.samples) {
    if (std::isnan(s.value) || s.value < 0) s.value = 0;
    auto it = s.metric.find(label);
    out[it == s.metric.end() ? std::string{} : it->second].push_back(std::move(s));
  }
  return out;
}

using ByObject = std::map<std::string, std::vector<Sample>, std::less<>>;

// queryBoth: the cpu and the memory answer, each by object.
Expected<std::pair<ByObject, ByObject>> by_object_both(const QueryResult& cpu, const QueryResult& memory,
                                                       std::string_view label) {
  auto c = by_object(cpu, label);
  if (!c) return c.error().at("cpu");
  auto m = by_object(memory, label);
  if (!m) return m.error().at("memory");
  return std::pair{std::move(*c), std::move(*m)};
}

// cpu in cores (DecimalSI), memory in bytes (BinarySI).
Expected<k8s::Quantity> usage_of(const Sample& s, std::string_view resource) {
  const bool is_cpu = resource == "cpu";
  auto q = sample_quantity(s.value, is_cpu ? k8s::QuantityFormat::DecimalSI : k8s::QuantityFormat::BinarySI);
  if (!q) return q.error().at(resource);
  return q;
}

}  // namespace

Expected<std::vector<k8s::PodMetrics>> pod_metrics(const QueryResult& cpu, const QueryResult& memory,
                                                   std::string_view namespace_name,
                                                   const std::vector<std::string>& pods, std::string_view pod_label,
                                                   std::string_view cpu_container_label,
                                                   std::string_view memory_container_label,
                                                   std::chrono::nanoseconds window, k8s::Timestamp now) {
  auto both = by_object_both(cpu, memory, pod_label);
  if (!both) return both.error();
  auto& [cpu_by_pod, memory_by_pod] = *both;
  std::vector<k8s::PodMetrics> out;
  for (const auto& name : pods) {
    auto c = cpu_by_pod.find(name);
    auto m = memory_by_pod.find(name);
    if (c == cpu_by_pod.end() || m == memory_by_pod.end()) continue;
    std::map<std::string, k8s::ResourceList, std::less<>> containers;
    k8s::Timestamp earliest = k8s::Timestamp::max();
    for (auto [samples, label, resource] :
         {std::tuple{&c->second, cpu_container_label, std::string_view("cpu")},
          std::tuple{&m->second, memory_container_label, std::string_view("memory")}}) {
      for (const auto& s : *samples) {
        auto q = usage_of(s, resource);
        if (!q) return q.error().at(name);
        auto it = s.metric.find(label);
        containers[it == s.metric.end() ? std::string{} : it->second][std::string(resource)] = std::move(*q);
        earliest = std::min(earliest, s.timestamp);
      }
    }
    k8s::PodMetrics pod;
    pod.metadata.name = name;
    pod.metadata.namespace_name = std::string(namespace_name);
    pod.metadata.creation_timestamp = now;
    pod.timestamp = earliest;
    pod.window = window;
    for (auto& [container, usage] : containers) {
      // One resource without the other: the other is 0 (BinarySI for both, as the adapter writes it).
      for (const char* resource : {"cpu", "memory"}) {
        if (!usage.contains(resource)) usage[resource] = k8s::Quantity::from_milli(0, k8s::QuantityFormat::BinarySI);
      }
      pod.containers.push_back({container, std::move(usage)});
    }
    out.push_back(std::move(pod));
  }
  return out;
}

Expected<std::vector<k8s::NodeMetrics>> node_metrics(const QueryResult& cpu, const QueryResult& memory,
                                                     const std::vector<std::string>& nodes, std::string_view node_label,
                                                     std::chrono::nanoseconds window, k8s::Timestamp now) {
  auto both = by_object_both(cpu, memory, node_label);
  if (!both) return both.error();
  auto& [cpu_by_node, memory_by_node] = *both;
  std::vector<k8s::NodeMetrics> out;
  for (const auto& name : nodes) {
    auto c = cpu_by_node.find(name);
    auto m = memory_by_node.find(name);
    if (c == cpu_by_node.end() || m == memory_by_node.end()) continue;
    // The first sample of each, as the adapter takes it.
    const Sample& cpu_sample = c->second.front();
    const Sample& memory_sample = m->second.front();
    auto used_cpu = usage_of(cpu_sample, "cpu");
    if (!used_cpu) return used_cpu.error().at(name);
    auto used_memory = usage_of(memory_sample, "memory");
    if (!used_memory) return used_memory.error().at(name);
    k8s::NodeMetrics node;
    node.metadata.name = name;
    node.metadata.creation_timestamp = now;
    node.timestamp = std::min(cpu_sample.timestamp, memory_sample.timestamp);
    node.window = window;
    node.usage = {{"cpu", std::move(*used_cpu)}, {"memory", std::move(*used_memory)}};
    out.push_back(std::move(node));
  }
  return out;
}

}  // namespace fedmetrics::promsource

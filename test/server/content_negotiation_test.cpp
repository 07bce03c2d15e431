#include <catch2/catch.hpp>

#include <string>

#include "server/content_negotiation.hpp"

using namespace fedmetrics;
using namespace fedmetrics::server;

namespace {

// "json", "table/v1", "table/v1beta1" or "406".
std::string outcome(const std::string& accept, bool table_convertible) {
  auto r = negotiate_representation(accept, table_convertible);
  if (const auto* status = std::get_if<k8s::Status>(&r)) {
    CHECK(status->code == 406);
    CHECK(status->reason == "NotAcceptable");
    CHECK(status->message == "only the following media types are accepted: application/json");
    return "406";
  }
  const auto& representation = std::get<Representation>(r);
  if (std::holds_alternative<JsonRepresentation>(representation)) return "json";
  return std::get<TableRepresentation>(representation).version == k8s::TableVersion::V1 ? "table/v1" : "table/v1beta1";
}

constexpr const char* kKubectlGet =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

}  // namespace

TEST_CASE("negotiate_representation: what clients send, on pods and nodes and on custom metrics",
          "[server][negotiation]") {
  struct Row {
    const char* accept;
    const char* metrics;  // pods and nodes of metrics.k8s.io: a Table exists
    const char* custom;   // custom and external metrics: no Table
  };
  const Row rows[] = {
      // No Accept, JSON, any type: JSON.
      {"", "json", "json"},
      {"application/json", "json", "json"},
      {"*/*", "json", "json"},
      {"application/*", "json", "json"},
      {"application/json, */*", "json", "json"},  // kubectl get --raw
      // kubectl top (protobuf preferred) and the HPA controller: JSON, never 406.
      {"application/vnd.kubernetes.protobuf, */*", "json", "json"},
      {"application/vnd.kubernetes.protobuf,application/json", "json", "json"},
      // kubectl get: the Table in v1; elsewhere the JSON clause after it.
      {kKubectlGet, "table/v1", "json"},
      {"application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", "table/v1beta1", "json"},
      {"application/json;as=Table;v=v1;g=meta.k8s.io", "table/v1", "406"},
      {"*/*;as=Table;v=v1;g=meta.k8s.io", "table/v1", "406"},
      // Nothing we write: 406.
      {"application/vnd.kubernetes.protobuf", "406", "406"},
      {"application/yaml", "406", "406"},
      {"text/plain", "406", "406"},
      {"application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", "406", "406"},
      {"not a media type", "406", "406"},
      // Conversions we do not make are clauses we cannot serve.
      {"application/json;as=Table;v=v2;g=meta.k8s.io,application/json", "json", "json"},
      {"application/json;as=Table;v=v1;g=apps", "406", "406"},
      {"application/json;as=Table;g=meta.k8s.io", "406", "406"},
      {"application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", "406", "406"},
      {"application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json", "json", "json"},
      // Quality decides, then specificity; q=0 is "not acceptable".
      {"application/json;q=0.5, application/json;as=Table;v=v1;g=meta.k8s.io", "table/v1", "json"},
      {"application/json;as=Table;v=v1;g=meta.k8s.io;q=0.5, application/json", "json", "json"},
      {"*/*;as=Table;v=v1;g=meta.k8s.io, application/json", "json", "json"},
      {"application/json;q=0", "406", "406"},
      {"application/json;q=nan", "406", "406"},  // not a quality: not acceptable
      {"application/json;q=-1", "406", "406"},
      {"application/json;q=inf", "json", "json"},  // above 1: the highest
      {"application/json;q=nan, application/json;as=Table;v=v1;g=meta.k8s.io;q=0.1", "table/v1", "406"},
      {"application/json;q=zero", "406", "406"},
      {"text/html, */*;q=0.1", "json", "json"},
      // Spelling: case, spaces, quoted values, trailing ';', stream=watch.
      {"APPLICATION/JSON", "json", "json"},
      {"application/json ; as=Table ; v=v1 ; g=meta.k8s.io", "table/v1", "406"},
      {"application/json;as=\"Table\";v=\"v1\";g=\"meta.k8s.io\"", "table/v1", "406"},
      {"application/json;", "json", "json"},
      {"application/json;stream=watch", "json", "json"},
      {"application/json;stream=other", "406", "406"},
      // A clause that does not parse is skipped, the others still count.
      {"application/json;as, application/json", "json", "json"},
      {"application/json;as=Table;as=Table;v=v1;g=meta.k8s.io,application/json", "json", "json"},
  };
  for (const auto& row : rows) {
    INFO("Accept: " << row.accept);
    CHECK(outcome(row.accept, true) == row.metrics);
    CHECK(outcome(row.accept, false) == row.custom);
  }
}

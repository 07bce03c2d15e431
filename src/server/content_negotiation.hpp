#pragma once
// What representation of a metrics answer the client's Accept header asks
// for, as kube-apiserver negotiates it (apimachinery's goautoneg ParseAccept
// and apiserver's negotiation.NegotiateMediaTypeOptions with the endpoint's
// restrictions): the clauses by quality, each tried against the one media
// type we write, application/json; the first that we can serve wins.
// Pure: no I/O.
//
// - No Accept, `application/json`, `application/*` or `*/*` (without `as`,
//   `g` or `v`, which ask for a conversion): the JSON of the object or list.
// - `application/json;as=Table;g=meta.k8s.io;v=v1` (or v1beta1; `*/*` and
//   `application/*` with those parameters too): a meta.k8s.io Table, on the
//   endpoints that have one (pods and nodes of metrics.k8s.io). Elsewhere,
//   and for any other `as` (PartialObjectMetadata, which kube-apiserver also
//   serves, included), the clause is one we cannot serve and the next is tried.
// - Nothing we can serve (`application/vnd.kubernetes.protobuf` alone,
//   `application/yaml` alone, a Table alone on custom metrics): 406
//   NotAcceptable, the Status kube-apiserver writes.
//
// kubectl get sends `application/json;as=Table;v=v1;g=meta.k8s.io,
// application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json`;
// kubectl top `application/vnd.kubernetes.protobuf, */*` and the HPA
// controller `application/vnd.kubernetes.protobuf,application/json`: both JSON.
//
// Where we differ from kube-apiserver, on purpose: a clause with q=0 is
// never chosen (RFC 9110 12.4.2: "not acceptable"; goautoneg keeps it), and
// clauses of equal quality keep their order, more specific first.
#include <string_view>
#include <variant>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/k8s/table.hpp"

namespace fedmetrics::server {

struct JsonRepresentation {
  friend bool operator==(const JsonRepresentation&, const JsonRepresentation&) = default;
};
struct TableRepresentation {
  k8s::TableVersion version = k8s::TableVersion::V1;
  friend bool operator==(const TableRepresentation&, const TableRepresentation&) = default;
};
using Representation = std::variant<JsonRepresentation, TableRepresentation>;

// `accept` is the request's Accept header (several header lines joined with
// ", "); empty when it sent none. `table_convertible`: the endpoint has a
// Table form. A Status is the 406 to answer.
std::variant<Representation, k8s::Status> negotiate_representation(std::string_view accept, bool table_convertible);

}  // namespace fedmetrics::server

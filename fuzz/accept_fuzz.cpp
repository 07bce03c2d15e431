// The Accept header, as a client sends it, through
// server::negotiate_representation (the clauses, their parameters and
// q-values), once for an endpoint with a Table form (pods, nodes) and once
// without (custom and external metrics). Checked beyond "no crash": an
// endpoint without a Table form never gets a Table; a refusal is a 406
// NotAcceptable; and a Table form only adds what can be served: an Accept
// served as JSON without it is not refused with it, and one refused with it
// is refused without it too.
#include <cstddef>
#include <cstdint>
#include <variant>

#include "fuzz_check.hpp"
#include "server/content_negotiation.hpp"

namespace {

using fedmetrics::server::Representation;
using fedmetrics::server::TableRepresentation;

bool refused(const std::variant<Representation, fedmetrics::k8s::Status>& answer) {
  return std::holds_alternative<fedmetrics::k8s::Status>(answer);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto accept = fedmetrics::fuzz::as_text(data, size);
  const auto with_table = fedmetrics::server::negotiate_representation(accept, true);
  const auto without_table = fedmetrics::server::negotiate_representation(accept, false);
  for (const auto* answer : {&with_table, &without_table}) {
    if (refused(*answer))
      FUZZ_CHECK(std::get<fedmetrics::k8s::Status>(*answer).code == 406, "a refusal that is not a 406: %d",
                 std::get<fedmetrics::k8s::Status>(*answer).code);
  }
  if (!refused(without_table))
    FUZZ_CHECK(!std::holds_alternative<TableRepresentation>(std::get<Representation>(without_table)),
               "a Table where the endpoint has none");
  FUZZ_CHECK(refused(without_table) || !refused(with_table), "served as JSON without a Table form, refused with one");
  FUZZ_CHECK(!refused(with_table) || refused(without_table), "refused with a Table form, served without one");
  return 0;
}

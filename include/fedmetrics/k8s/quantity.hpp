#pragma once
// Kubernetes resource.Quantity (apimachinery pkg/api/resource): parsing, exact
// arithmetic and the canonical serialization, byte for byte as Go prints it.
//
// Representation: a signed count of nano-units (10^-9) in 128 bits plus the
// format remembered from the suffix. Go rounds every parsed value up, away from
// zero, to a multiple of 10^-9, so nano-units hold every Quantity exactly.
// Go keeps DecimalSI values beyond int64 in arbitrary precision; we hold them
// exactly up to |value| < 2^127 nano-units (about 1.7e29, i.e. 1.7e11 E) and
// reject larger ones with an error instead of rounding them.
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::k8s {

enum class QuantityFormat { DecimalSI, BinarySI, DecimalExponent };

class Quantity {
 public:
  __extension__ typedef __int128 Nanos;  // __extension__: no -Wpedantic warning

  Quantity() = default;  // zero, DecimalSI

  // Parses every form Kubernetes accepts (Go's ParseQuantity). Error messages are Go's.
  static Expected<Quantity> parse(std::string_view text);

  // Go's NewQuantity(value, format).
  static Quantity from_value(std::int64_t value, QuantityFormat format);
  // Go's NewMilliQuantity(milli, format).
  static Quantity from_milli(std::int64_t milli, QuantityFormat format);
  // Go's NewScaledQuantity(value, scale): value x 10^scale, DecimalSI.
  // Values below 10^-9 round up away from zero; callers use scale >= -9.
  static Quantity from_scaled(std::int64_t value, int scale);
  // Metrics-server's CPU form: nanocores as DecimalSI.
  static Quantity from_nanos(Nanos nanos, QuantityFormat format = QuantityFormat::DecimalSI);

  // Canonical serialization (Go's Quantity.String).
  [[nodiscard]] std::string to_string() const;

  [[nodiscard]] QuantityFormat format() const { return format_; }
  [[nodiscard]] Nanos nanos() const { return nanos_; }
  [[nodiscard]] bool is_zero() const { return nanos_ == 0; }
  [[nodiscard]] int sign() const { return nanos_ < 0 ? -1 : (nanos_ > 0 ? 1 : 0); }

  // Go's MilliValue(): ceil(q * 1000), rounded away from zero; saturates at int64.
  [[nodiscard]] std::int64_t milli_value() const;
  // Go's Value(): ceil(q), rounded away from zero; saturates at int64.
  [[nodiscard]] std::int64_t value() const;
  // For ratios only (utilization, usage ratio); never for printing.
  [[nodiscard]] double as_double() const;

  // Go's Add/Sub: the result keeps this quantity's format unless this is zero,
  // in which case it takes the other's. Error on overflow of the representation.
  [[nodiscard]] Expected<Quantity> plus(const Quantity& other) const;
  [[nodiscard]] Expected<Quantity> minus(const Quantity& other) const;
  // Multiplies by an integer (Go's Mul); keeps the format.
  [[nodiscard]] Expected<Quantity> times(std::int64_t factor) const;
  [[nodiscard]] Quantity negated() const;

  // Compares values only (format is not part of identity, as Go's Cmp/Equal).
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) { return a.nanos_ <=> b.nanos_; }
  friend bool operator==(const Quantity& a, const Quantity& b) { return a.nanos_ == b.nanos_; }

 private:
  Quantity(Nanos nanos, QuantityFormat format) : nanos_(nanos), format_(format) {}

  Nanos nanos_ = 0;
  QuantityFormat format_ = QuantityFormat::DecimalSI;
};

// JSON: always a string. Decoding accepts a string (surrounding whitespace
// trimmed, as Go's UnmarshalJSON does), an unquoted JSON number, and null (zero).
void to_json(nlohmann::json& out, const Quantity& q);
Expected<Quantity> quantity_from_json(const nlohmann::json& in);

}  // namespace fedmetrics::k8s

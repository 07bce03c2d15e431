#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/quantity.hpp"

using namespace fedmetrics::k8s;
using nlohmann::json;

namespace {

constexpr const char* kErrFormat =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr const char* kErrNumeric = "unable to parse numeric part of quantity";
constexpr const char* kErrSuffix = "unable to parse quantity's suffix";

// 2^127 - 1 nano-units, the largest magnitude we hold.
constexpr const char* kMaxText = "170141183460469231731687303715.884105727";
constexpr const char* kMaxCanonical = "170141183460469231731687303715884105727n";

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

// Parses text that the test expects to be valid; fails the test otherwise.
Quantity q(const std::string& text) {
  Expected<Quantity> parsed = Quantity::parse(text);
  INFO("parsing \"" << text << "\"");
  if (!parsed) FAIL("unexpected error: " << parsed.error().message);
  return *parsed;
}

std::string canonical(const std::string& text) { return q(text).to_string(); }

std::string error_of(const std::string& text) {
  Expected<Quantity> parsed = Quantity::parse(text);
  if (parsed) return "(no error; parsed as " + parsed->to_string() + ")";
  return parsed.error().message;
}

std::string sum(const std::string& a, const std::string& b) {
  Expected<Quantity> result = q(a).plus(q(b));
  return result ? result->to_string() : "error: " + result.error().message;
}

std::string difference(const std::string& a, const std::string& b) {
  Expected<Quantity> result = q(a).minus(q(b));
  return result ? result->to_string() : "error: " + result.error().message;
}

bool is_out_of_range_error(const Expected<Quantity>& result) {
  return !result && result.error().message.find("out of range") != std::string::npos;
}

std::string from_json(const json& in) {
  Expected<Quantity> result = quantity_from_json(in);
  return result ? result->to_string() : "error: " + result.error().message;
}

}  // namespace

// Inputs and the canonical form Go prints for each; rows with several inputs
// are split a/b/c.
TEST_CASE("Quantity: canonical serialization table", "[k8s][quantity]") {
  struct Row {
    const char* id;
    const char* input;
    const char* canonical;
  };
  const Row rows[] = {
      {"1", "0", "0"},
      {"2", "00", "0"},
      {"3", "1Ki", "1Ki"},
      {"4", "1Mi", "1Mi"},
      {"5", "1024Mi", "1Gi"},
      {"6", "1000M", "1G"},
      {"7", "307200Ki", "300Mi"},
      {"8", "1025024Mi", "1001Gi"},
      {"9", "1024Gi", "1Ti"},
      {"10", "5000m", "5"},
      {"11", "0.5", "500m"},
      {"12", "0.001T", "1G"},
      {"13", "1000u", "1m"},
      {"14", "1.08", "1080m"},
      {"15", "1080000000n", "1080m"},
      {"16", ".001e12", "1e9"},
      {"17", "0.001e0", "1e-3"},
      {"18", "1000e-12", "1e-9"},
      {"19", ".001Ki", "1024m"},
      {"20", ".000001Ki", "1024u"},
      {"21", ".000000001Ki", "1024n"},
      {"22", ".000000000001Ki", "2n"},
      {"23", "1234567M", "1234567M"},
      {"24", "300e6", "300e6"},
      {"25", "80e-3", "80e-3"},
      {"26", "999999999999999999.1", "999999999999999999100m"},
      {"27", "1000000000000000000", "1E"},
      {"28", "10000000000000000000", "10E"},
      {"29a", "1.0E", "1E"},
      {"29b", "-1.0E", "-1E"},
      {"30", "9223372036854775808", "9223372036854775808"},
      {"31", "9223372036854775807000m", "9223372036854775807"},
      {"32", "1e3", "1e3"},
      {"33", "1500m", "1500m"},
      {"34", "1.5", "1500m"},
      {"35", "1.5Gi", "1536Mi"},
      {"36", "2000m", "2"},
      {"37", "0.1", "100m"},
      {"38", "1000", "1k"},
      {"39", "50k", "50k"},
      {"40", "100.035k", "100035"},
      {"41", "10.035M", "10035k"},
      {"42", "0.5Mi", "512Ki"},
      {"43", "0.5Ki", "512"},
      {"44", "1.5Ki", "1536"},
      {"45", "100.035Ki", "102435840m"},
      {"46", "3.001n", "4n"},
      {"47", "0.00000012345", "124n"},
      {"48", "1.2e3", "1200"},
      {"49", "1.3E+6", "1300e3"},
      {"50", "1E-3", "1e-3"},
      {"51", "9Ei", "9223372036854775807"},
      {"52", "12E", "12E"},
      {"53", ".0001k", "100m"},
      {"54", "5000000n", "5m"},
      {"55a", "-500m", "-500m"},
      {"55b", "-1Gi", "-1Gi"},
      {"55c", "+1Gi", "1Gi"},
  };
  for (const Row& row : rows) {
    INFO("row " << row.id << ": \"" << row.input << "\"");
    Expected<Quantity> parsed = Quantity::parse(row.input);
    REQUIRE(parsed.ok());
    CHECK(parsed->to_string() == row.canonical);
  }
}

TEST_CASE("Quantity: canonical output parses back to itself", "[k8s][quantity]") {
  const char* inputs[] = {"1024Mi", "1.5Gi",  "100.035Ki", "0.001e0", "999999999999999999.1",
                          "9Ei",    "1.3E+6", "-0.5",      "3.001n",  "12E",
                          "1000E",  "300e6",  kMaxText};
  for (const char* input : inputs) {
    INFO("input \"" << input << "\"");
    const Quantity first = q(input);
    const Quantity again = q(first.to_string());
    CHECK(again.to_string() == first.to_string());
    CHECK(again == first);
  }
}

TEST_CASE("Quantity: the suffix decides the format", "[k8s][quantity]") {
  CHECK(q("1").format() == QuantityFormat::DecimalSI);
  CHECK(q("5n").format() == QuantityFormat::DecimalSI);
  CHECK(q("1E").format() == QuantityFormat::DecimalSI);  // "E" alone is exa
  CHECK(q("1E").to_string() == "1E");
  CHECK(q("1Ki").format() == QuantityFormat::BinarySI);
  CHECK(q("0Ki").format() == QuantityFormat::BinarySI);
  CHECK(q("1e3").format() == QuantityFormat::DecimalExponent);
  CHECK(q("1E3").format() == QuantityFormat::DecimalExponent);
  CHECK(q("1E-3").format() == QuantityFormat::DecimalExponent);
  // A BinarySI value with 0 < |v| < 1 after rounding becomes DecimalSI.
  CHECK(q(".000000000001Ki").format() == QuantityFormat::DecimalSI);
  CHECK(q("-.000000000001Ki").format() == QuantityFormat::DecimalSI);
  CHECK(q("0.5Ki").format() == QuantityFormat::BinarySI);  // 512 is not below 1
}

// CanonicalizeBytes: BinarySI with -1024 < v < 1024, or not an integer, prints
// as DecimalSI; otherwise only whole factors of 1024 become a suffix.
TEST_CASE("Quantity: BinarySI prints as DecimalSI below 1024 and for fractions", "[k8s][quantity]") {
  CHECK(Quantity::from_value(1000, QuantityFormat::BinarySI).to_string() == "1k");
  CHECK(Quantity::from_value(-1000, QuantityFormat::BinarySI).to_string() == "-1k");
  CHECK(canonical("0.9765625Ki") == "1k");
  CHECK(canonical("1023.5Ki") == "1048064");
  CHECK(canonical("1000Ki") == "1000Ki");
  CHECK(canonical("1025Ki") == "1025Ki");
  CHECK(canonical("-1Ki") == "-1Ki");
  CHECK(canonical("1.0009765625Ki") == "1025");
  CHECK(canonical("2048.5Ki") == "2097664");
  CHECK(Quantity::from_milli(1024500, QuantityFormat::BinarySI).to_string() == "1024500m");
  // Printed bare, such a value reads back as DecimalSI, so its second
  // canonical text differs (as in Go); the value does not (fuzz/quantity_fuzz.cpp).
  CHECK(canonical("19220812.5Ki") == "19682112000");
  CHECK(canonical("19682112000") == "19682112k");
  CHECK(q("19682112k") == q("19220812.5Ki"));
}

// TestQuantityParse's invalid list plus the suffix rules, with Go's messages.
TEST_CASE("Quantity: invalid strings give Go's error messages", "[k8s][quantity]") {
  struct Row {
    const char* input;
    const char* message;
  };
  const Row rows[] = {
      {"", kErrFormat},       {"1.1.M", kErrFormat},
      {"1+1.0M", kErrFormat}, {"0.1mi", kErrSuffix},
      {"0.1am", kErrFormat},  {"aoeu", kErrFormat},
      {".5i", kErrSuffix},    {"1i", kErrSuffix},
      {"-3.01i", kErrSuffix}, {"-3.01e-", kErrSuffix},
      {" 1", kErrFormat},     {"1 ", kErrFormat},
      {"e", kErrSuffix},                           // "e" alone is not an exponent
      {"1e", kErrSuffix},     {"1K", kErrSuffix},  // kilo is lowercase
      {"1Ki3", kErrSuffix},   {"1E+", kErrSuffix},
      {"1eM", kErrSuffix},    {"1e3e", kErrFormat},
      {"--1", kErrSuffix},                                             // the second sign starts the suffix "-1"
      {"1,5", kErrFormat},    {"1e99999999999999999999", kErrSuffix},  // strconv.ParseInt range error
  };
  for (const Row& row : rows) {
    INFO("input \"" << row.input << "\"");
    CHECK(error_of(row.input) == row.message);
  }
}

// Go's scanner lets the number be empty. It then yields zero on the int64 fast
// path, and ErrNumeric where it falls back to inf.Dec (scale below nano, Pi, Ei).
TEST_CASE("Quantity: digit-less numbers follow Go's parser", "[k8s][quantity]") {
  CHECK(canonical(".") == "0");
  CHECK(canonical("-.") == "0");
  CHECK(canonical("+") == "0");
  CHECK(canonical("-") == "0");
  CHECK(canonical("Ki") == "0");
  CHECK(canonical(".Ti") == "0");
  CHECK(canonical("m") == "0");
  CHECK(canonical(".e-9") == "0");
  CHECK(error_of(".e-10") == kErrNumeric);
  CHECK(error_of("-e-10") == kErrNumeric);
  CHECK(error_of("Pi") == kErrNumeric);
  CHECK(error_of("-.Ei") == kErrNumeric);
  // With a digit the same suffixes are fine.
  CHECK(canonical("0Ei") == "0");
  CHECK(canonical("0.e-10") == "0");
}

TEST_CASE("Quantity: zero prints as 0 in every form", "[k8s][quantity]") {
  for (const char* input :
       {"0", "00", "-0", "+0", "0Ki", "0m", "0n", "-0.000Mi", "0e5", "0.0", "0e-999999999", "0e99999999999"}) {
    INFO("input \"" << input << "\"");
    const Quantity zero = q(input);
    CHECK(zero.to_string() == "0");
    CHECK(zero.is_zero());
    CHECK(zero.sign() == 0);
  }
  CHECK(difference("1Gi", "1Gi") == "0");
  CHECK(sum("100m", "-100m") == "0");
  CHECK(q("0m").negated().to_string() == "0");
  CHECK(Quantity{}.to_string() == "0");
}

TEST_CASE("Quantity: values round up away from zero to a nano", "[k8s][quantity]") {
  CHECK(canonical("3.001n") == "4n");
  CHECK(canonical("-3.001n") == "-4n");
  CHECK(canonical("0.00000012345") == "124n");
  CHECK(canonical("0.00000012354") == "124n");
  CHECK(canonical("0.0000000005") == "1n");
  CHECK(canonical("-0.0000000005") == "-1n");
  CHECK(canonical("0.9n") == "1n");
  CHECK(canonical("1.1E-9") == "2e-9");
  CHECK(canonical("1e-999999999") == "1e-9");  // DecimalExponent prints a nano as 1e-9
  CHECK(canonical("-1e-999999999") == "-1e-9");
  CHECK(canonical("1e-9223372036854775808") == "1e-9");
  CHECK(q("1e-999999999").nanos() == 1);
  // Exact values are not rounded.
  CHECK(canonical("1.000000001") == "1000000001n");
  CHECK(canonical("1.0000000010000") == "1000000001n");
  // Digits far below a nano still round up, however long the text is.
  CHECK(canonical("0." + std::string(100000, '0') + "1") == "1n");
  CHECK(canonical("1.000000001" + std::string(1000, '0') + "1") == "1000000002n");
  // Binary suffixes: 0.0009765625Ki is exactly 1; anything more rounds up.
  CHECK(canonical("0.0009765625Ki") == "1");
  CHECK(canonical("0.00097656250000000000000000001Ki") == "1000000001n");
  CHECK(canonical("0.0009765624999999999999Ki") == "1");
  // 2^-60 Ei is exactly 1: all 60 decimals of 2^-60 matter, and nothing past them.
  const std::string two_to_minus_60 = "0.000000000000000000867361737988403547205962240695953369140625";
  CHECK(canonical(two_to_minus_60 + "Ei") == "1");
  CHECK(canonical(two_to_minus_60 + "1Ei") == "1000000001n");
  CHECK(canonical(two_to_minus_60 + std::string(200, '0') + "1Ei") == "1000000001n");
  CHECK(canonical("0.000000000000000000867361737988403547205962240695953369140624Ei") == "1");
}

TEST_CASE("Quantity: BinarySI values are capped at 2^63-1", "[k8s][quantity]") {
  CHECK(canonical("9Ei") == "9223372036854775807");
  CHECK(canonical("8Ei") == "9223372036854775807");  // 2^63 is one past the cap
  CHECK(canonical("7Ei") == "7Ei");
  CHECK(canonical("-9Ei") == "-9223372036854775807");
  CHECK(canonical("9223372036854775807Ki") == "9223372036854775807");
  CHECK(canonical(std::string(60, '9') + "Ki") == "9223372036854775807");  // beyond 128 bits: still the cap
  CHECK(q("9Ei").format() == QuantityFormat::BinarySI);
  // DecimalSI and DecimalExponent are not capped.
  CHECK(canonical("9223372036854775808") == "9223372036854775808");
  CHECK(canonical("10E") == "10E");
  CHECK(canonical("1e20") == "100e18");
}

TEST_CASE("Quantity: values beyond 128-bit nano-units are out-of-range errors", "[k8s][quantity]") {
  CHECK(canonical(kMaxText) == kMaxCanonical);
  CHECK(canonical(std::string("-") + kMaxText) == std::string("-") + kMaxCanonical);
  CHECK(is_out_of_range_error(Quantity::parse("170141183460469231731687303715.884105728")));
  CHECK(is_out_of_range_error(Quantity::parse("-170141183460469231731687303715.884105728")));
  CHECK(canonical("1e29") == "100e27");
  CHECK(is_out_of_range_error(Quantity::parse("2e29")));
  CHECK(is_out_of_range_error(Quantity::parse("1e30")));
  CHECK(is_out_of_range_error(Quantity::parse("1000000000000E")));
  // Huge exponents and huge digit strings fail fast without allocating for them.
  CHECK(is_out_of_range_error(Quantity::parse("1e999999999")));
  CHECK(is_out_of_range_error(Quantity::parse("-1e999999999")));
  CHECK(is_out_of_range_error(Quantity::parse("1e9223372036854775807")));
  CHECK(is_out_of_range_error(Quantity::parse("1" + std::string(100000, '0'))));
  // Go narrows the exponent to int32 (1e4294967297 would become 1e1); we keep its meaning.
  CHECK(is_out_of_range_error(Quantity::parse("1e4294967297")));
  CHECK(canonical("1e-4294967297") == "1e-9");
}

// The printer works in 64 bits while |nanos| fits and in 128 bits beyond:
// both sides of 2^64 nano-units print alike.
TEST_CASE("Quantity: printing is the same on both sides of 2^64 nano-units", "[k8s][quantity]") {
  CHECK(canonical("18446744073709551615n") == "18446744073709551615n");  // 2^64 - 1
  CHECK(canonical("18446744073709551616n") == "18446744073709551616n");  // 2^64
  CHECK(canonical("-18446744073709551616n") == "-18446744073709551616n");
  CHECK(canonical("18446744073709551000n") == "18446744073709551u");
  CHECK(canonical("18446744074000000000n") == "18446744074");
  CHECK(canonical("17Gi") == "17Gi");  // 1.8e19 nanos: 64 bits
  CHECK(canonical("18Gi") == "18Gi");  // 1.9e19 nanos: 128 bits
  CHECK(canonical("-18446744073709551615n") == "-18446744073709551615n");
  CHECK(canonical("18014398Ki") == "18014398Ki");  // 2^64 - 5.2e11 nanos: 64 bits
  CHECK(canonical("18014399Ki") == "18014399Ki");  // 2^64 + 5.0e11 nanos: 128 bits
  CHECK(canonical("18e9") == "18e9");
  CHECK(canonical("19e9") == "19e9");
  CHECK(canonical("18G") == "18G");
  CHECK(canonical("19G") == "19G");
}

// DecimalSI has no suffix past E (10^18). Go would print a bare mantissa
// ("1000E" -> "1"); we print exponent notation, which keeps the value.
TEST_CASE("Quantity: DecimalSI past E prints in exponent notation", "[k8s][quantity]") {
  CHECK(canonical("1000E") == "1e21");
  CHECK(canonical("5000E") == "5e21");
  CHECK(canonical("1000000E") == "1e24");
  CHECK(canonical("-1000E") == "-1e21");
  CHECK(canonical("1234E") == "1234E");
  // BinarySI grown past Ei by arithmetic has no suffix; it prints exact digits.
  Expected<Quantity> two_to_70 = q("1Ei").times(1024);
  REQUIRE(two_to_70.ok());
  CHECK(two_to_70->to_string() == "1180591620717411303424");
  CHECK(q(two_to_70->to_string()) == *two_to_70);
}

// TestMilliNewSet, TestNewSet, TestNewScaledSet, prometheus-adapter and metrics-server.
TEST_CASE("Quantity: constructors match Go's NewQuantity family", "[k8s][quantity]") {
  CHECK(Quantity::from_milli(1, QuantityFormat::DecimalSI).to_string() == "1m");
  CHECK(Quantity::from_milli(1000, QuantityFormat::DecimalSI).to_string() == "1");
  CHECK(Quantity::from_milli(1024, QuantityFormat::BinarySI).to_string() == "1024m");
  CHECK(Quantity::from_milli(1024, QuantityFormat::BinarySI).format() == QuantityFormat::BinarySI);
  CHECK(Quantity::from_value(1234000, QuantityFormat::DecimalSI).to_string() == "1234k");
  CHECK(Quantity::from_value(1000, QuantityFormat::DecimalSI).to_string() == "1k");
  CHECK(Quantity::from_value(1024, QuantityFormat::BinarySI).to_string() == "1Ki");
  CHECK(Quantity::from_value(1048576, QuantityFormat::BinarySI).to_string() == "1Mi");
  CHECK(Quantity::from_value(1000000, QuantityFormat::DecimalExponent).to_string() == "1e6");
  // An unknown format prints as DecimalExponent (CanonicalizeBytes' default).
  CHECK(Quantity::from_value(1000000, static_cast<QuantityFormat>(42)).to_string() == "1e6");
  CHECK(Quantity::from_value(kInt64Max, QuantityFormat::DecimalSI).to_string() == "9223372036854775807");
  CHECK(Quantity::from_value(kInt64Min, QuantityFormat::DecimalSI).to_string() == "-9223372036854775808");
  CHECK(Quantity::from_scaled(1000, -9).to_string() == "1u");
  CHECK(Quantity::from_scaled(5, 3).to_string() == "5k");
  CHECK(Quantity::from_scaled(1, -12).to_string() == "1n");    // rounds up
  CHECK(Quantity::from_scaled(-1, -12).to_string() == "-1n");  // away from zero
  CHECK(Quantity::from_scaled(1500, -12).to_string() == "2n");
  CHECK(Quantity::from_scaled(7, std::numeric_limits<int>::min()).to_string() == "1n");
  // prometheus-adapter metricFor: NewMilliQuantity(int64(v*1000), DecimalSI).
  CHECK(Quantity::from_milli(500, QuantityFormat::DecimalSI).to_string() == "500m");
  CHECK(Quantity::from_milli(2000, QuantityFormat::DecimalSI).to_string() == "2");
  CHECK(Quantity::from_milli(10500, QuantityFormat::DecimalSI).to_string() == "10500m");
  // metrics-server: CPU in nanocores (DecimalSI), memory in bytes (BinarySI).
  CHECK(Quantity::from_nanos(2318451).to_string() == "2318451n");
  CHECK(Quantity::from_nanos(5000000).to_string() == "5m");
  CHECK(Quantity::from_value(20468 * 1024, QuantityFormat::BinarySI).to_string() == "20468Ki");
}

TEST_CASE("Quantity: metrics-server nanocores keep their value", "[k8s][quantity]") {
  CHECK(canonical("2318451n") == "2318451n");
  CHECK(canonical("187563109n") == "187563109n");
  CHECK(canonical("5000000n") == "5m");
  CHECK(q("2318451n").nanos() == Quantity::Nanos{2318451});
  CHECK(q("2318451n").milli_value() == 3);
  CHECK(sum("2318451n", "187563109n") == "189881560n");
  CHECK(sum("500000n", "500000n") == "1m");
}

// MilliValue() = ceil(q * 1000) and Value() = ceil(q), rounded away from zero;
// the HPA reads every usage through MilliValue().
TEST_CASE("Quantity: MilliValue and Value round up away from zero", "[k8s][quantity]") {
  struct Row {
    const char* input;
    std::int64_t milli;
    std::int64_t value;
  };
  const Row rows[] = {
      {"0", 0, 0},
      {"1n", 1, 1},
      {"-1n", -1, -1},
      {"123456789n", 124, 1},
      {"-123456789n", -124, -1},
      {"100m", 100, 1},
      {"-100m", -100, -1},
      {"1.5", 1500, 2},
      {"-1.5", -1500, -2},
      {"2.0001m", 3, 1},
      {"1Ki", 1024000, 1024},
      {"1.5Gi", 1610612736000, 1610612736},
      {"9223372036854775807", kInt64Max, kInt64Max},
      {"-9223372036854775808", kInt64Min, kInt64Min},
      {"-9223372036854775807.5", kInt64Min, kInt64Min},
  };
  for (const Row& row : rows) {
    INFO("input \"" << row.input << "\"");
    const Quantity quantity = q(row.input);
    CHECK(quantity.milli_value() == row.milli);
    CHECK(quantity.value() == row.value);
  }
}

TEST_CASE("Quantity: MilliValue and Value saturate at int64", "[k8s][quantity]") {
  CHECK(q("9223372036854775808").value() == kInt64Max);
  CHECK(q("-9223372036854775809").value() == kInt64Min);
  CHECK(q("9223372036854775807").milli_value() == kInt64Max);
  CHECK(q("1e20").milli_value() == kInt64Max);
  CHECK(q("-1e20").milli_value() == kInt64Min);
  CHECK(q(kMaxText).value() == kInt64Max);
}

// TestAdd and TestQuantityAddZeroPreservesSuffix.
TEST_CASE("Quantity: Add keeps the receiver's format unless the receiver is zero", "[k8s][quantity]") {
  const Quantity ten_decimal = Quantity::from_value(10, QuantityFormat::DecimalSI);
  const Quantity ten_binary = Quantity::from_value(10, QuantityFormat::BinarySI);
  const Quantity one_decimal = Quantity::from_value(1, QuantityFormat::DecimalSI);
  const Quantity one_binary = Quantity::from_value(1, QuantityFormat::BinarySI);

  Expected<Quantity> a = ten_decimal.plus(one_binary);
  REQUIRE(a.ok());
  CHECK(a->value() == 11);
  CHECK(a->format() == QuantityFormat::DecimalSI);
  Expected<Quantity> b = ten_binary.plus(one_decimal);
  REQUIRE(b.ok());
  CHECK(b->value() == 11);
  CHECK(b->format() == QuantityFormat::BinarySI);

  // The receiver's format shows in the text.
  CHECK(sum("1Ki", "1024") == "2Ki");
  CHECK(sum("1024", "1Ki") == "2048");

  for (const char* value : {"100m", "1Gi"}) {
    INFO("value " << value);
    CHECK(sum(value, "0") == value);
    CHECK(sum("0", value) == value);
  }
  CHECK(q("0").plus(q("1Gi"))->format() == QuantityFormat::BinarySI);
  CHECK(sum("0Ki", "1000") == "1k");  // a zero receiver takes the other's format
}

// TestQuantitySubZeroPreservesSuffix.
TEST_CASE("Quantity: Sub from zero takes the other's format", "[k8s][quantity]") {
  CHECK(difference("100m", "0") == "100m");
  CHECK(difference("1Gi", "0") == "1Gi");
  CHECK(difference("0", "100m") == "-100m");
  CHECK(difference("0", "1Gi") == "-1Gi");
  CHECK(difference("1Gi", "512Mi") == "512Mi");
  CHECK(difference("1", "1500m") == "-500m");
  CHECK(difference("1024", "1Ki") == "0");
}

TEST_CASE("Quantity: merging sums across clusters", "[k8s][quantity]") {
  CHECK(sum("20468Ki", "30000Ki") == "50468Ki");
  CHECK(sum("500m", "1") == "1500m");
  CHECK(sum("1", "500m") == "1500m");
  CHECK(sum("1Gi", "512Mi") == "1536Mi");
  CHECK(sum("1Ki", "1023Ki") == "1Mi");
  CHECK(sum("9223372036854775807", "1") == "9223372036854775808");  // no int64 limit
  CHECK(sum("7Ei", "7Ei") == "14Ei");                               // past 2^63-1: only parsing caps BinarySI
  CHECK(sum("8Ei", "8Ei") == "18446744073709551614");               // each 8Ei parsed to the cap
}

TEST_CASE("Quantity: arithmetic overflow is an error", "[k8s][quantity]") {
  const Quantity max = q(kMaxText);
  CHECK(is_out_of_range_error(max.plus(q("1n"))));
  CHECK(is_out_of_range_error(max.negated().minus(q("1n"))));
  CHECK(is_out_of_range_error(max.negated().plus(q("-1n"))));
  CHECK(is_out_of_range_error(max.minus(max.negated())));
  CHECK(is_out_of_range_error(max.times(2)));
  CHECK(is_out_of_range_error(max.times(-2)));
  CHECK(is_out_of_range_error(q("1E").times(kInt64Max)));
  CHECK(max.minus(q("1n"))->plus(q("1n"))->to_string() == kMaxCanonical);
  CHECK(max.negated().to_string() == std::string("-") + kMaxCanonical);
}

TEST_CASE("Quantity: times multiplies and keeps the format", "[k8s][quantity]") {
  CHECK(q("1Gi").times(3)->to_string() == "3Gi");
  CHECK(q("1Gi").times(3)->format() == QuantityFormat::BinarySI);
  CHECK(q("250m").times(4)->to_string() == "1");
  CHECK(q("1e3").times(-2)->to_string() == "-2e3");
  CHECK(q("1").times(kInt64Max)->to_string() == "9223372036854775807");
  CHECK(q("5").times(0)->to_string() == "0");
}

// TestQuantityNeg and TestQuantityCmp.
TEST_CASE("Quantity: negation and comparison", "[k8s][quantity]") {
  CHECK(q("9.01").negated().to_string() == "-9010m");
  CHECK(q("-1Gi").negated().to_string() == "1Gi");
  CHECK(q("-1Gi").sign() == -1);
  CHECK(q("1n").sign() == 1);
  CHECK(q("100m") > q("50m"));
  CHECK(q("50m") < q("100m"));
  CHECK(q("10000T") > q("100Gi"));
  CHECK(q("1Ki") == q("1024"));  // format is not part of identity
  CHECK(q("1.5") == q("1500m"));
  CHECK(q("1500m").as_double() == Approx(1.5));
  CHECK(q("-2Ki").as_double() == Approx(-2048.0));
}

TEST_CASE("Quantity JSON: encodes the canonical string", "[k8s][quantity][json]") {
  json j = q("1.5Gi");
  CHECK(j == json("1536Mi"));
  json object = {{"cpu", q("5000000n")}, {"memory", q("20468Ki")}};
  CHECK(object.dump() == R"({"cpu":"5m","memory":"20468Ki"})");
  CHECK(json(q("-0")).dump() == R"("0")");
}

TEST_CASE("Quantity JSON: decodes strings after trimming Go's white space", "[k8s][quantity][json]") {
  CHECK(from_json(json("1Gi")) == "1Gi");
  CHECK(from_json(json("  1Gi ")) == "1Gi");
  CHECK(from_json(json("\t500m\n\r")) == "500m");
  CHECK(from_json(json("\xC2\xA0"
                       "1Ki"
                       "\xE3\x80\x80")) == "1Ki");  // NBSP, ideographic space
  CHECK(from_json(json::parse(R"("  2318451n  ")")) == "2318451n");
  CHECK(from_json(json("1 Gi")) == "error: " + std::string(kErrFormat));
  CHECK(from_json(json("   ")) == "error: " + std::string(kErrFormat));
  CHECK(from_json(json("1K")) == "error: " + std::string(kErrSuffix));
  CHECK(is_out_of_range_error(quantity_from_json(json("1e999999999"))));
}

TEST_CASE("Quantity JSON: decodes bare numbers", "[k8s][quantity][json]") {
  CHECK(from_json(json::parse("1")) == "1");
  CHECK(from_json(json::parse("-1")) == "-1");
  CHECK(from_json(json::parse("1000")) == "1k");
  CHECK(from_json(json::parse("9223372036854775807")) == "9223372036854775807");
  CHECK(from_json(json::parse("18446744073709551615")) == "18446744073709551615");
  CHECK(from_json(json::parse("1.5")) == "1500m");
  CHECK(from_json(json::parse("0.1")) == "100m");
  CHECK(from_json(json::parse("-0.25")) == "-250m");
  CHECK(from_json(json::parse("123.0")) == "123");
  CHECK(from_json(json::parse("-0.0")) == "0");
  CHECK(from_json(json::parse("2.5e-10")) == "1e-9");
  CHECK(from_json(json::parse("1e21")) == "1e21");
  CHECK(is_out_of_range_error(quantity_from_json(json::parse("1e300"))));
}

TEST_CASE("Quantity JSON: null decodes to zero", "[k8s][quantity][json]") {
  Expected<Quantity> zero = quantity_from_json(json(nullptr));
  REQUIRE(zero.ok());
  CHECK(zero->is_zero());
  CHECK(zero->to_string() == "0");
}

// Go's UnmarshalJSON hands any other raw JSON text to ParseQuantity, which rejects it.
TEST_CASE("Quantity JSON: other JSON types are rejected without throwing", "[k8s][quantity][json]") {
  const json others[] = {json(true),           json(false),
                         json::array({1}),     json::array(),
                         json::object(),       json({{"value", "1"}}),
                         json::binary({1, 2}), json(json::value_t::discarded)};
  for (const json& other : others) {
    INFO("json type " << other.type_name());
    CHECK_NOTHROW(quantity_from_json(other));
    CHECK(from_json(other) == "error: " + std::string(kErrFormat));
  }
}

TEST_CASE("Quantity JSON: round trip keeps value and text", "[k8s][quantity][json]") {
  for (const char* input : {"1.5Gi", "2318451n", "-500m", "1e3", "9223372036854775808", kMaxText}) {
    INFO("input \"" << input << "\"");
    const Quantity original = q(input);
    const json encoded = original;
    Expected<Quantity> decoded = quantity_from_json(encoded);
    REQUIRE(decoded.ok());
    CHECK(*decoded == original);
    CHECK(decoded->to_string() == original.to_string());
  }
}

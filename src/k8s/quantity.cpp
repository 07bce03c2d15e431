// Kubernetes resource.Quantity (k8s.io/apimachinery). The parser follows
// apimachinery pkg/api/resource/quantity.go (parseQuantityString, ParseQuantity)
// and suffix.go (interpret); the printer follows CanonicalizeBytes. Everything
// is integer arithmetic on nano-units; no floating point touches parse or print.
#include "fedmetrics/k8s/quantity.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fedmetrics::k8s {
namespace {

using Nanos = Quantity::Nanos;
__extension__ typedef unsigned __int128 UNanos;

// Every Quantity holds |nanos| <= 2^127 - 1, so negation never overflows.
constexpr Nanos kMaxNanos = static_cast<Nanos>(~UNanos{0} >> 1);
constexpr Nanos kMinNanos = -kMaxNanos;
constexpr Nanos kNanosPerUnit = 1'000'000'000;
constexpr Nanos kNanosPerMilli = 1'000'000;
// quantity.go maxAllowed: BinarySI values are capped at 2^63-1 units on parse.
constexpr Nanos kBinaryCapNanos = Nanos{std::numeric_limits<std::int64_t>::max()} * kNanosPerUnit;

// Go's error values, quantity.go ErrFormatWrong, ErrNumeric and ErrSuffix.
constexpr std::string_view kErrFormat =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr std::string_view kErrNumeric = "unable to parse numeric part of quantity";
constexpr std::string_view kErrSuffix = "unable to parse quantity's suffix";

// Go keeps such values in arbitrary precision; we refuse them rather than round.
Error parse_out_of_range() {
  return Error{"quantity is out of range: its magnitude must be below 2^127 nano-units (about 1.7e29)"};
}
Error arithmetic_out_of_range(std::string_view operation) {
  return Error{"quantity " + std::string(operation) +
               " is out of range: the magnitude must be below 2^127 nano-units (about 1.7e29)"};
}

// ---------------------------------------------------------------------------
// Checked 128-bit arithmetic. Results equal to -2^127 count as overflow so the
// symmetric range invariant holds.

std::optional<Nanos> checked_add(Nanos a, Nanos b) {
  Nanos r = 0;
  if (__builtin_add_overflow(a, b, &r) || r < kMinNanos) return std::nullopt;
  return r;
}

std::optional<Nanos> checked_sub(Nanos a, Nanos b) {
  Nanos r = 0;
  if (__builtin_sub_overflow(a, b, &r) || r < kMinNanos) return std::nullopt;
  return r;
}

std::optional<Nanos> checked_mul(Nanos a, Nanos b) {
  Nanos r = 0;
  if (__builtin_mul_overflow(a, b, &r) || r < kMinNanos) return std::nullopt;
  return r;
}

UNanos magnitude_of(Nanos n) { return n < 0 ? UNanos{0} - static_cast<UNanos>(n) : static_cast<UNanos>(n); }

// Instantiated for unsigned __int128 and, when the magnitude fits (nearly
// always), for std::uint64_t: 128-bit division is a library call per digit.
template <class U>
std::string to_decimal_string(U v) {
  std::array<char, 40> buffer{};  // 2^128 has 39 digits
  std::size_t pos = buffer.size();
  do {
    buffer[--pos] = static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  } while (v != 0);
  return std::string(buffer.data() + pos, buffer.size() - pos);
}

// ---------------------------------------------------------------------------
// Scanning: quantity.go parseQuantityString, character for character.

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_suffix_letter(char c) { return std::string_view("eEinumkKMGTP").find(c) != std::string_view::npos; }

std::size_t skip_digits(std::string_view s, std::size_t pos) {
  while (pos < s.size() && is_digit(s[pos])) ++pos;
  return pos;
}

struct ScannedQuantity {
  bool negative = false;
  bool has_digit = false;     // any digit before the suffix, leading zeros included
  std::string_view whole;     // integer digits, leading zeros stripped
  std::string_view fraction;  // digits after '.', possibly empty ("1." is valid)
  std::string_view suffix;    // [eEinumkKMGTP]*[-+]?[0-9]*, interpreted later
};

// Go accepts "1.", ".", "-." and even a bare sign: the number part may be empty.
// Anything after the suffix pattern is the regular-expression error.
Expected<ScannedQuantity> scan(std::string_view s) {
  ScannedQuantity out;
  std::size_t pos = 0;
  if (pos < s.size() && (s[pos] == '-' || s[pos] == '+')) {
    out.negative = s[pos] == '-';
    ++pos;
  }
  const std::size_t zeros_start = pos;
  while (pos < s.size() && s[pos] == '0') ++pos;
  out.has_digit = pos > zeros_start;

  std::size_t end = skip_digits(s, pos);
  out.whole = s.substr(pos, end - pos);
  pos = end;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    end = skip_digits(s, pos);
    out.fraction = s.substr(pos, end - pos);
    pos = end;
  }
  out.has_digit = out.has_digit || !out.whole.empty() || !out.fraction.empty();

  const std::size_t suffix_start = pos;
  while (pos < s.size() && is_suffix_letter(s[pos])) ++pos;
  if (pos < s.size() && (s[pos] == '-' || s[pos] == '+')) ++pos;
  pos = skip_digits(s, pos);
  if (pos != s.size()) return Error{std::string(kErrFormat)};
  out.suffix = s.substr(suffix_start);
  return out;
}

// ---------------------------------------------------------------------------
// Suffixes: suffix.go interpret. Table lookup first, then "e"/"E" + integer.

struct SuffixMeaning {
  int base = 10;              // 10 or 2
  std::int64_t exponent = 0;  // power of `base`
  QuantityFormat format = QuantityFormat::DecimalSI;
};

// strconv.ParseInt(s, 10, 64): optional sign, at least one digit, no overflow.
std::optional<std::int64_t> parse_go_int64(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  std::int64_t value = 0;  // accumulated negatively so INT64_MIN fits
  for (char c : s) {
    if (!is_digit(c)) return std::nullopt;
    if (__builtin_mul_overflow(value, 10, &value) || __builtin_sub_overflow(value, c - '0', &value))
      return std::nullopt;
  }
  if (negative) return value;
  if (value == std::numeric_limits<std::int64_t>::min()) return std::nullopt;
  return -value;
}

std::optional<SuffixMeaning> interpret_suffix(std::string_view suffix) {
  struct Entry {
    std::string_view text;
    SuffixMeaning meaning;
  };
  using enum QuantityFormat;
  static constexpr std::array<Entry, 16> kTable{{
      {"n", {10, -9, DecimalSI}},
      {"u", {10, -6, DecimalSI}},
      {"m", {10, -3, DecimalSI}},
      {"", {10, 0, DecimalSI}},
      {"k", {10, 3, DecimalSI}},
      {"M", {10, 6, DecimalSI}},
      {"G", {10, 9, DecimalSI}},
      {"T", {10, 12, DecimalSI}},
      {"P", {10, 15, DecimalSI}},
      {"E", {10, 18, DecimalSI}},
      {"Ki", {2, 10, BinarySI}},
      {"Mi", {2, 20, BinarySI}},
      {"Gi", {2, 30, BinarySI}},
      {"Ti", {2, 40, BinarySI}},
      {"Pi", {2, 50, BinarySI}},
      {"Ei", {2, 60, BinarySI}},
  }};
  for (const Entry& entry : kTable) {
    if (entry.text == suffix) return entry.meaning;
  }
  // "E" alone was exa above; "e" alone is not an exponent (len(suffix) > 1).
  if (suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::optional<std::int64_t> exponent = parse_go_int64(suffix.substr(1));
    if (!exponent) return std::nullopt;
    return SuffixMeaning{10, *exponent, DecimalExponent};
  }
  return std::nullopt;
}

// Go parses through an int64 fast path and falls back to inf.Dec.SetString,
// which fails without a digit (ErrNumeric). A digit-less number ("", ".", "-")
// reaches that fallback only when its scale is below nano (fast path needs
// scale >= -9) or for Pi/Ei, whose precision 15 - 1 - exponent*3/10 - 1 is
// negative. Elsewhere Go silently yields zero ("Ki", "-m", ".").
bool go_rejects_digitless_number(const SuffixMeaning& meaning) {
  if (meaning.base == 2) return 15 - 1 - meaning.exponent * 3 / 10 - 1 < 0;
  return meaning.exponent < -9;
}

// ---------------------------------------------------------------------------
// Exact value to nano-units, rounded up away from zero (ParseQuantity's
// amount.Round(amount, Nano, inf.RoundUp)).

// Digits below the nano point. Only the first kKept matter for the result:
// multiplying by 2^b (b <= 60) crosses an integer exactly at n/2^b, which has
// at most b decimal places, so every later digit only tells "above or not"
// and is folded into one nonzero sticky digit.
struct SubNanoDigits {
  static constexpr std::size_t kKept = 64;
  // digits[i] has place value 10^-(i+1) nano; digits[kKept] is the sticky digit.
  std::array<unsigned char, kKept + 1> digits{};

  [[nodiscard]] bool is_zero() const {
    for (unsigned char d : digits)
      if (d != 0) return false;
    return true;
  }

  // Doubles the fraction and returns the integer carried out (0 or 1).
  int double_in_place() {
    int carry = 0;
    for (std::size_t i = digits.size(); i-- > 0;) {
      const int twice = digits[i] * 2 + carry;
      digits[i] = static_cast<unsigned char>(twice % 10);
      carry = twice / 10;
    }
    return carry;
  }
};

// `significant` has no leading or trailing zeros; `integer_digits` is how many
// of its digits (possibly more than it has, or negative) lie above the nano point.
SubNanoDigits sub_nano_digits(std::string_view significant, std::int64_t integer_digits) {
  SubNanoDigits out;
  const auto count = static_cast<std::int64_t>(significant.size());
  for (std::size_t i = 0; i < SubNanoDigits::kKept; ++i) {
    const std::int64_t index = integer_digits + static_cast<std::int64_t>(i);
    if (index >= 0 && index < count)
      out.digits[i] = static_cast<unsigned char>(significant[static_cast<std::size_t>(index)] - '0');
  }
  // The last significant digit is nonzero, so anything beyond the kept window is.
  if (count > integer_digits + static_cast<std::int64_t>(SubNanoDigits::kKept)) out.digits.back() = 1;
  return out;
}

// The digits above the nano point as an integer (nullopt past 2^127).
std::optional<Nanos> whole_nanos(std::string_view significant, std::int64_t integer_digits) {
  const auto count = static_cast<std::int64_t>(significant.size());
  Nanos integer = 0;
  for (std::int64_t i = 0; i < integer_digits; ++i) {
    const int digit = i < count ? significant[static_cast<std::size_t>(i)] - '0' : 0;
    std::optional<Nanos> next = checked_mul(integer, 10);
    if (next) next = checked_add(*next, digit);
    if (!next) return std::nullopt;
    integer = *next;
  }
  return integer;
}

// |value| in nano-units, rounded up, where value = (whole.fraction) x 10^exp10 x 2^exp2.
// Returns nullopt when the result does not fit below 2^127.
std::optional<Nanos> magnitude_in_nanos(std::string_view whole, std::string_view fraction, std::int64_t exp10,
                                        int exp2) {
  std::string digits;
  digits.reserve(whole.size() + fraction.size());
  digits.append(whole).append(fraction);
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return Nanos{0};
  const std::size_t last = digits.find_last_not_of('0');
  const std::string_view significant = std::string_view(digits).substr(first, last - first + 1);

  // Exponents beyond +-2^40 are all equally absurd; clamping keeps the sums below in int64.
  constexpr std::int64_t kExponentClamp = std::int64_t{1} << 40;
  exp10 = std::clamp(exp10, -kExponentClamp, kExponentClamp);
  // Power of ten, in nano-units, of the last significant digit.
  const std::int64_t last_place =
      exp10 + 9 - static_cast<std::int64_t>(fraction.size()) + static_cast<std::int64_t>(digits.size() - 1 - last);
  const std::int64_t integer_digits = static_cast<std::int64_t>(significant.size()) + last_place;
  if (integer_digits > 39) return std::nullopt;  // >= 10^39 > 2^127

  std::optional<Nanos> integer = whole_nanos(significant, integer_digits);
  SubNanoDigits below = sub_nano_digits(significant, integer_digits);

  // Scale by 2^exp2: the integer part shifts, the fraction carries into it.
  if (!integer || *integer > (kMaxNanos >> exp2)) return std::nullopt;
  *integer <<= exp2;
  Nanos carried = 0;
  for (int i = 0; i < exp2; ++i) carried = carried * 2 + below.double_in_place();
  std::optional<Nanos> result = checked_add(*integer, carried);
  if (result && !below.is_zero()) result = checked_add(*result, 1);  // round up
  return result;
}

// The common case, as metrics-server and prometheus-adapter send quantities
// ("2318451n", "14536Ki", "1500m"): an integer of at most 18 digits with a
// suffix at or above nano. Its value is a whole number of nano-units, so no
// rounding is involved and the general digit-by-digit path is not needed.
// nullopt: not this case (or too large for it); use magnitude_in_nanos.
std::optional<Nanos> small_integer_nanos(const ScannedQuantity& q, const SuffixMeaning& meaning) {
  if (!q.fraction.empty() || q.whole.size() > 18) return std::nullopt;
  Nanos whole = 0;
  for (char c : q.whole) whole = whole * 10 + (c - '0');
  if (meaning.base == 2) {
    if (meaning.exponent > 60) return std::nullopt;
    std::optional<Nanos> units = checked_mul(whole, Nanos{1} << meaning.exponent);
    return units ? checked_mul(*units, kNanosPerUnit) : std::nullopt;
  }
  if (meaning.exponent < -9 || meaning.exponent > 18) return std::nullopt;
  Nanos scale = 1;
  for (std::int64_t i = -9; i < meaning.exponent; ++i) scale *= 10;
  return checked_mul(whole, scale);
}

// ---------------------------------------------------------------------------
// Printing: CanonicalizeBytes.

template <class U>
struct DecimalForm {
  U mantissa = 0;
  int exponent = 0;  // power of ten, a multiple of 3
};

// All trailing zeros go into the exponent, which is then lowered to a multiple
// of 3 (int64Amount/infDecAmount.AsCanonicalBytes). Starting from nano (10^-9),
// the mantissa never grows beyond the original magnitude.
template <class U>
DecimalForm<U> canonical_decimal(U magnitude) {
  DecimalForm<U> form{magnitude, -9};
  while (form.mantissa % 10 == 0) {
    form.mantissa /= 10;
    ++form.exponent;
  }
  while (form.exponent % 3 != 0) {
    form.mantissa *= 10;
    --form.exponent;
  }
  return form;
}

std::optional<std::string_view> decimal_si_suffix(int exponent) {
  switch (exponent) {
    case -9: return "n";
    case -6: return "u";
    case -3: return "m";
    case 0: return "";
    case 3: return "k";
    case 6: return "M";
    case 9: return "G";
    case 12: return "T";
    case 15: return "P";
    case 18: return "E";
    default: return std::nullopt;
  }
}

template <class U>
std::string format_decimal(U magnitude, QuantityFormat format) {
  const DecimalForm<U> form = canonical_decimal(magnitude);
  std::string text = to_decimal_string(form.mantissa);
  if (format == QuantityFormat::DecimalSI) {
    if (std::optional<std::string_view> suffix = decimal_si_suffix(form.exponent)) return text.append(*suffix);
    // Beyond "E": Go would print a bare mantissa ("1000E" -> "1", a 10^21
    // error); we fall back to exponent notation, which keeps the value exact.
  }
  if (form.exponent != 0) text.append("e").append(std::to_string(form.exponent));  // lowercase, as Go
  return text;
}

// BinarySI prints as DecimalSI when -1024 < v < 1024 or v is not an integer;
// otherwise factors of 1024 become Ki..Ei.
template <class U>
std::string format_binary(U magnitude) {
  const U per_unit = static_cast<U>(kNanosPerUnit);
  if (magnitude % per_unit != 0 || magnitude < 1024 * per_unit)
    return format_decimal(magnitude, QuantityFormat::DecimalSI);
  U units = magnitude / per_unit;
  int powers = 0;
  while (units >= 1024 && units % 1024 == 0) {
    units /= 1024;
    ++powers;
  }
  static constexpr std::array<std::string_view, 7> kSuffixes{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  // Past Ei (reachable only by arithmetic) there is no binary suffix; stay exact.
  if (powers >= static_cast<int>(kSuffixes.size())) return format_decimal(magnitude, QuantityFormat::DecimalExponent);
  return to_decimal_string(units).append(kSuffixes[static_cast<std::size_t>(powers)]);
}

// The canonical text of a nonzero magnitude, in the narrowest type that holds it.
std::string format_magnitude(UNanos magnitude, QuantityFormat format) {
  constexpr UNanos kFitsUint64 = std::numeric_limits<std::uint64_t>::max();
  if (magnitude <= kFitsUint64) {
    const auto narrow = static_cast<std::uint64_t>(magnitude);
    if (format == QuantityFormat::BinarySI) return format_binary(narrow);
    return format_decimal(narrow, format == QuantityFormat::DecimalSI ? format : QuantityFormat::DecimalExponent);
  }
  if (format == QuantityFormat::BinarySI) return format_binary(magnitude);
  return format_decimal(magnitude, format == QuantityFormat::DecimalSI ? format : QuantityFormat::DecimalExponent);
}

// ceil(nanos / divisor) away from zero, clamped to int64.
std::int64_t scaled_value(Nanos nanos, Nanos divisor) {
  Nanos result = nanos / divisor;
  if (nanos % divisor != 0) result += nanos < 0 ? -1 : 1;
  constexpr Nanos kMax = std::numeric_limits<std::int64_t>::max();
  constexpr Nanos kMin = std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(std::clamp(result, kMin, kMax));
}

// ---------------------------------------------------------------------------
// JSON helpers.

// Go's strings.TrimSpace trims Unicode White_Space; these are its UTF-8 forms.
constexpr std::string_view kUnicodeSpaces[] = {
    "\t",           "\n",           "\v",           "\f",           "\r",           " ",
    "\xC2\x85",     "\xC2\xA0",     "\xE1\x9A\x80", "\xE2\x80\x80", "\xE2\x80\x81", "\xE2\x80\x82",
    "\xE2\x80\x83", "\xE2\x80\x84", "\xE2\x80\x85", "\xE2\x80\x86", "\xE2\x80\x87", "\xE2\x80\x88",
    "\xE2\x80\x89", "\xE2\x80\x8A", "\xE2\x80\xA8", "\xE2\x80\xA9", "\xE2\x80\xAF", "\xE2\x81\x9F",
    "\xE3\x80\x80",
};

// Length of the white-space character `s` starts (or ends) with; 0 if none.
std::size_t leading_space(std::string_view s) {
  for (std::string_view space : kUnicodeSpaces)
    if (s.starts_with(space)) return space.size();
  return 0;
}
std::size_t trailing_space(std::string_view s) {
  for (std::string_view space : kUnicodeSpaces)
    if (s.ends_with(space)) return space.size();
  return 0;
}

std::string_view trim_go_space(std::string_view s) {
  while (std::size_t n = leading_space(s)) s.remove_prefix(n);
  while (std::size_t n = trailing_space(s)) s.remove_suffix(n);
  return s;
}

// The shortest text that reads back as the same double ("1.5", "1e+21").
std::string shortest_text(double value) {
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

}  // namespace

// ---------------------------------------------------------------------------

Expected<Quantity> Quantity::parse(std::string_view text) {
  if (text.empty()) return Error{std::string(kErrFormat)};
  Expected<ScannedQuantity> scanned = scan(text);
  if (!scanned) return scanned.error();
  const std::optional<SuffixMeaning> meaning = interpret_suffix(scanned->suffix);
  if (!meaning) return Error{std::string(kErrSuffix)};
  if (!scanned->has_digit && go_rejects_digitless_number(*meaning)) return Error{std::string(kErrNumeric)};

  const bool binary = meaning->base == 2;
  std::optional<Nanos> magnitude = small_integer_nanos(*scanned, *meaning);
  if (!magnitude) {
    magnitude = magnitude_in_nanos(scanned->whole, scanned->fraction, binary ? 0 : meaning->exponent,
                                   binary ? static_cast<int>(meaning->exponent) : 0);
  }
  QuantityFormat format = meaning->format;
  if (binary) {
    // "The max is just a simple cap": anything past 2^63-1 units, including
    // what overflows our 128 bits, becomes exactly 2^63-1.
    if (!magnitude || *magnitude > kBinaryCapNanos) magnitude = kBinaryCapNanos;
    // "This avoids rounding and hopefully confusion, too."
    if (*magnitude > 0 && *magnitude < kNanosPerUnit) format = QuantityFormat::DecimalSI;
  } else if (!magnitude) {
    return parse_out_of_range();
  }
  return Quantity(scanned->negative ? -*magnitude : *magnitude, format);
}

Quantity Quantity::from_value(std::int64_t value, QuantityFormat format) {
  return Quantity(Nanos{value} * kNanosPerUnit, format);
}

Quantity Quantity::from_milli(std::int64_t milli, QuantityFormat format) {
  return Quantity(Nanos{milli} * kNanosPerMilli, format);
}

// value x 10^scale in nano-units: scale + 9 powers of ten. Below nano we round
// up away from zero, as parsing does; above the 128-bit range we saturate
// (only reachable with scale > 10, which no caller uses).
Quantity Quantity::from_scaled(std::int64_t value, int scale) {
  Nanos nanos = value;
  const std::int64_t tens = std::int64_t{scale} + 9;
  if (tens >= 0) {
    for (std::int64_t i = 0; i < tens && nanos != 0; ++i) {
      std::optional<Nanos> next = checked_mul(nanos, 10);
      if (!next) return Quantity(value < 0 ? kMinNanos : kMaxNanos, QuantityFormat::DecimalSI);
      nanos = *next;
    }
    return Quantity(nanos, QuantityFormat::DecimalSI);
  }
  bool inexact = false;
  for (std::int64_t i = 0; i < -tens && nanos != 0; ++i) {
    inexact = inexact || nanos % 10 != 0;
    nanos /= 10;
  }
  if (inexact) nanos += value < 0 ? -1 : 1;
  return Quantity(nanos, QuantityFormat::DecimalSI);
}

Quantity Quantity::from_nanos(Nanos nanos, QuantityFormat format) {
  return Quantity(nanos < kMinNanos ? kMinNanos : nanos, format);
}

std::string Quantity::to_string() const {
  if (nanos_ == 0) return "0";  // never "0m", never "-0"
  // DecimalExponent, and any unknown format (CanonicalizeBytes' default case),
  // print as DecimalExponent (format_magnitude).
  std::string text = format_magnitude(magnitude_of(nanos_), format_);
  return nanos_ < 0 ? text.insert(0, 1, '-') : text;
}

std::int64_t Quantity::milli_value() const { return scaled_value(nanos_, kNanosPerMilli); }

std::int64_t Quantity::value() const { return scaled_value(nanos_, kNanosPerUnit); }

double Quantity::as_double() const { return static_cast<double>(nanos_) / 1e9; }

Expected<Quantity> Quantity::plus(const Quantity& other) const {
  const std::optional<Nanos> sum = checked_add(nanos_, other.nanos_);
  if (!sum) return arithmetic_out_of_range("sum");
  return Quantity(*sum, is_zero() ? other.format_ : format_);
}

Expected<Quantity> Quantity::minus(const Quantity& other) const {
  const std::optional<Nanos> difference = checked_sub(nanos_, other.nanos_);
  if (!difference) return arithmetic_out_of_range("difference");
  return Quantity(*difference, is_zero() ? other.format_ : format_);
}

Expected<Quantity> Quantity::times(std::int64_t factor) const {
  const std::optional<Nanos> product = checked_mul(nanos_, factor);
  if (!product) return arithmetic_out_of_range("product");
  return Quantity(*product, format_);
}

Quantity Quantity::negated() const { return Quantity(-nanos_, format_); }

void to_json(nlohmann::json& out, const Quantity& q) { out = q.to_string(); }

// Go's UnmarshalJSON parses the raw JSON text: a quoted string (trimmed), a
// bare number, or null. Any other JSON value fails Go's scanner, hence kErrFormat.
Expected<Quantity> quantity_from_json(const nlohmann::json& in) {
  using nlohmann::json;
  switch (in.type()) {
    case json::value_t::null: return Quantity{};
    case json::value_t::string: return Quantity::parse(trim_go_space(*in.get_ptr<const json::string_t*>()));
    case json::value_t::number_integer:
      return Quantity::parse(std::to_string(*in.get_ptr<const json::number_integer_t*>()));
    case json::value_t::number_unsigned:
      return Quantity::parse(std::to_string(*in.get_ptr<const json::number_unsigned_t*>()));
    case json::value_t::number_float: return Quantity::parse(shortest_text(*in.get_ptr<const json::number_float_t*>()));
    default: return Error{std::string(kErrFormat)};
  }
}

}  // namespace fedmetrics::k8s

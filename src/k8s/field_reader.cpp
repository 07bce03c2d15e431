#include "fedmetrics/k8s/field_reader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace fedmetrics::k8s {

using nlohmann::json;

namespace {

// Where a Fields over a value that is not an object points, and what a read
// of a missing value returns: they outlive every reader.
const json& empty_object() {
  static const json empty = json::object();
  return empty;
}
const json& empty_array() {
  static const json empty = json::array();
  return empty;
}
const json& null_value() {
  static const json null;
  return null;
}

}  // namespace

std::string field_path(std::string_view base, std::string_view key) {
  if (base.empty()) return std::string(key);
  return std::string(base) + "." + std::string(key);
}

std::string item_path(std::string_view base, std::size_t index) {
  return std::string(base) + "[" + std::to_string(index) + "]";
}

std::string did_you_mean(std::string_view key, std::initializer_list<std::string_view> known) {
  std::string_view best;
  std::size_t best_distance = 3;
  for (std::string_view candidate : known) {
    // Levenshtein distance, one row at a time.
    std::vector<std::size_t> row(candidate.size() + 1);
    for (std::size_t j = 0; j < row.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= key.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= candidate.size(); ++j) {
        const std::size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (key[i - 1] == candidate[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    const bool shortened = key.size() >= 4 && candidate.substr(0, key.size()) == key;
    if (shortened) row.back() = std::min<std::size_t>(row.back(), 2);
    if (row.back() < best_distance) {
      best_distance = row.back();
      best = candidate;
    }
  }
  return best.empty() ? std::string() : " (did you mean \"" + std::string(best) + "\"?)";
}

void FieldReader::fail(std::string_view path, std::string_view message) {
  if (!error_) error_ = Error{std::string(message)}.at(path);
}

void FieldReader::fail(Error error) {
  if (!error_) error_ = std::move(error);
}

std::string FieldReader::string(const json& value, std::string_view path) {
  if (!ok()) return {};
  if (!value.is_string()) {
    fail(path, "not a string");
    return {};
  }
  return value.get<std::string>();
}

std::int64_t FieldReader::integer(const json& value, std::string_view path) {
  if (!ok()) return 0;
  // Unsigned first: nlohmann's is_number_integer() holds for unsigned values
  // too, and 2^64 - 1 read as a signed integer would be -1.
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return static_cast<std::int64_t>(u);
    fail(path, "out of range for an integer");
    return 0;
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number_float()) {
    // 9e15 < 2^53: a float below it with no fraction is a whole number exactly.
    const double d = value.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<std::int64_t>(d);
  }
  fail(path, "not an integer");
  return 0;
}

std::int32_t FieldReader::int32(const json& value, std::string_view path) {
  const std::int64_t v = integer(value, path);
  if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) {
    fail(path, "out of range for a 32-bit integer");
    return 0;
  }
  return static_cast<std::int32_t>(v);
}

std::int64_t FieldReader::integer_in(const json& value, std::string_view path, std::int64_t min, std::int64_t max) {
  const std::int64_t v = integer(value, path);
  if (ok() && (v < min || v > max)) {
    fail(path, "must be between " + std::to_string(min) + " and " + std::to_string(max));
    return min;
  }
  return ok() ? v : min;
}

double FieldReader::number(const json& value, std::string_view path) {
  if (!ok()) return 0;
  if (!value.is_number()) {
    fail(path, "not a number");
    return 0;
  }
  return value.get<double>();
}

bool FieldReader::boolean(const json& value, std::string_view path) {
  if (!ok()) return false;
  if (!value.is_boolean()) {
    fail(path, "not a boolean");
    return false;
  }
  return value.get<bool>();
}

Quantity FieldReader::quantity(const json& value, std::string_view path) {
  if (!ok()) return {};
  if (!value.is_string() && !value.is_number()) {
    fail(path, "not a quantity");
    return {};
  }
  auto q = quantity_from_json(value);
  if (!q) {
    fail(q.error().at(path));
    return {};
  }
  return *q;
}

Timestamp FieldReader::time(const json& value, std::string_view path) {
  if (!ok()) return {};
  auto t = value.is_string() ? parse_time(value.get<std::string>()) : Expected<Timestamp>(Error{"not a time"});
  if (!t) {
    fail(path, "not a time");
    return {};
  }
  return *t;
}

std::chrono::nanoseconds FieldReader::duration(const json& value, std::string_view path) {
  if (!ok()) return {};
  if (!value.is_string()) {
    fail(path, "not a duration");
    return {};
  }
  auto d = parse_duration(value.get<std::string>());
  if (!d) {
    fail(d.error().at(path));
    return {};
  }
  return *d;
}

Fields::Fields(FieldReader& reader, const json& json, std::string path, UnknownFields unknown)
    : reader_(&reader), json_(&json), path_(std::move(path)), unknown_(unknown) {
  if (!json.is_object()) {
    if (reader.ok()) reader.fail(path_, std::string("not an object (got ") + json.type_name() + ")");
    json_ = &empty_object();
  }
}

void Fields::allow(std::initializer_list<std::string_view> known) const {
  if (!refuses_unknown() || !ok()) return;
  for (const auto& [key, value] : json_->items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      fail(key, "unknown field" + did_you_mean(key, known));
      return;
    }
  }
}

const json* Fields::raw(std::string_view key) const {
  if (!ok()) return nullptr;
  auto it = json_->find(key);
  if (it == json_->end() || it->is_null()) return nullptr;
  return &*it;
}

const json& Fields::required(std::string_view key) const {
  const auto* v = raw(key);
  if (v == nullptr) {
    fail(key, "is required");
    return null_value();
  }
  return *v;
}

std::optional<Fields> Fields::object(std::string_view key) const {
  const auto* v = raw(key);
  if (v == nullptr) return std::nullopt;
  return child(*v, path_of(key));
}

const json& Fields::array(std::string_view key) const {
  const auto* v = raw(key);
  if (v == nullptr) return empty_array();
  if (!v->is_array()) {
    fail(key, "not an array");
    return empty_array();
  }
  return *v;
}

}  // namespace fedmetrics::k8s

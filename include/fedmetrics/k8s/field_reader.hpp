#pragma once
// Reading an untrusted JSON document (a FederatedHPA, a scenario file, a
// world file converted from YAML) field by field, with errors that name the
// field's path ("steps[2].pods[0].startTime: not a time").
//
// A FieldReader holds the error of one document: the first failure is kept,
// and once there is one every read returns nothing (nullopt, an empty array,
// a default value), so a decoder goes on to its end without checking after
// each field and reports the first thing that was wrong. Nothing here throws.
//
//   k8s::FieldReader reader;
//   k8s::Fields spec(reader, json, "spec");
//   auto max = spec.int32("maxReplicas");
//   if (!max) spec.fail("maxReplicas", "is required");
//   return reader.finish(Spec{max.value_or(0)});
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/quantity.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::k8s {

// What a reader does with a key it does not read. An object from an API
// server may come from a newer version with fields this program does not
// know: they are ignored. A file a person wrote is refused for them, since a
// misspelled field would otherwise be dropped silently.
enum class UnknownFields { Ignore, Refuse };

// "spec.metrics" from "spec" and "metrics" ("metrics" from "" and "metrics").
std::string field_path(std::string_view base, std::string_view key);
// "spec.metrics[2]".
std::string item_path(std::string_view base, std::size_t index);

// " (did you mean \"minReplicas\"?)" when `key` is one or two edits away from
// one of `known` (a typo) or a shortening of it ("rebalanceWindow"), else "".
std::string did_you_mean(std::string_view key, std::initializer_list<std::string_view> known);

// The error state of one document, and the reads of single values at a path.
class FieldReader {
 public:
  [[nodiscard]] bool ok() const { return !error_.has_value(); }
  [[nodiscard]] const std::optional<Error>& error() const { return error_; }

  // Records "<path>: <message>" unless an error is already recorded.
  void fail(std::string_view path, std::string_view message);
  // Records an error that already names its field.
  void fail(Error error);

  // The value read, or the first error.
  template <class T>
  [[nodiscard]] Expected<T> finish(T value) const {
    if (error_) return *error_;
    return Expected<T>(std::move(value));
  }

  // Single values. A wrong value records the error and returns the default
  // (0, "", false, a zero Quantity); after an error they return it at once.
  std::string string(const nlohmann::json& value, std::string_view path);
  // A whole number: an integer, or a float with no fraction below 2^53.
  std::int64_t integer(const nlohmann::json& value, std::string_view path);
  std::int32_t int32(const nlohmann::json& value, std::string_view path);
  // An integer within [min, max]; "must be between <min> and <max>" outside.
  std::int64_t integer_in(const nlohmann::json& value, std::string_view path, std::int64_t min, std::int64_t max);
  double number(const nlohmann::json& value, std::string_view path);
  bool boolean(const nlohmann::json& value, std::string_view path);
  // A string ("250m") or a number, as resource.Quantity reads JSON.
  Quantity quantity(const nlohmann::json& value, std::string_view path);
  // An RFC 3339 string.
  Timestamp time(const nlohmann::json& value, std::string_view path);
  // A Go duration string ("1m30s").
  std::chrono::nanoseconds duration(const nlohmann::json& value, std::string_view path);
  // One of `choices`, by its name: "must be Max, Min or Disabled (got \"x\")" otherwise.
  template <class E>
  E one_of(const nlohmann::json& value, std::string_view path,
           std::initializer_list<std::pair<std::string_view, E>> choices) {
    const std::string name = string(value, path);
    for (const auto& [choice, e] : choices)
      if (ok() && name == choice) return e;
    if (ok()) fail(path, must_be(choices, name));
    return choices.begin()->second;
  }

 private:
  template <class E>
  static std::string must_be(std::initializer_list<std::pair<std::string_view, E>> choices, const std::string& got) {
    std::string words = "must be ";
    std::size_t i = 0;
    for (const auto& choice : choices) {
      if (i > 0) words += i + 1 == choices.size() ? " or " : ", ";
      words += choice.first;
      ++i;
    }
    return words + " (got \"" + got + "\")";
  }

  std::optional<Error> error_;
};

// A JSON object being read at a path. Absent and null fields read as absent,
// as Go's decoder leaves the zero value. Objects reached from it (object(),
// required_object(), child(), each_object()) share its reader and its
// UnknownFields rule, which allow() applies. A value that is not an object
// records "not an object (got <type>)" and reads as an empty one.
class Fields {
 public:
  Fields(FieldReader& reader, const nlohmann::json& json, std::string path,
         UnknownFields unknown = UnknownFields::Ignore);

  // An object inside this one (an element of one of its arrays or maps), read by the same rule.
  [[nodiscard]] Fields child(const nlohmann::json& json, std::string path) const {
    return Fields(*reader_, json, std::move(path), unknown_);
  }

  [[nodiscard]] FieldReader& reader() const { return *reader_; }
  [[nodiscard]] bool ok() const { return reader_->ok(); }
  [[nodiscard]] bool refuses_unknown() const { return unknown_ == UnknownFields::Refuse; }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string path_of(std::string_view key) const { return field_path(path_, key); }

  // Records "<path>.<key>: <message>".
  void fail(std::string_view key, std::string_view message) const { reader_->fail(path_of(key), message); }
  // Records "<path>: <message>", about the object itself.
  void fail_here(std::string_view message) const { reader_->fail(path_, message); }

  // The object's fields: with UnknownFields::Refuse, the first key (in key
  // order) that is not among them fails as "<path>.<key>: unknown field",
  // with a "did you mean" for a near miss. Null values count: a misspelled
  // key is wrong whatever it holds.
  void allow(std::initializer_list<std::string_view> known) const;

  [[nodiscard]] const nlohmann::json& raw_object() const { return *json_; }
  // The value at `key`; nullptr when absent, null, or after an error.
  [[nodiscard]] const nlohmann::json* raw(std::string_view key) const;
  [[nodiscard]] bool has(std::string_view key) const { return raw(key) != nullptr; }
  // The value at `key`; "is required" when absent (and then null).
  [[nodiscard]] const nlohmann::json& required(std::string_view key) const;
  // The object at `key`; "is required" when absent, "not an object" when it is not one.
  [[nodiscard]] Fields required_object(std::string_view key) const { return child(required(key), path_of(key)); }
  [[nodiscard]] std::optional<Fields> object(std::string_view key) const;
  // The array at `key` (empty when absent); "not an array" when it is not one.
  [[nodiscard]] const nlohmann::json& array(std::string_view key) const;

  // Reads each element of the array at `key`: read(element, its path).
  template <class Read>
  void each(std::string_view key, Read&& read) const {
    const nlohmann::json& elements = array(key);
    for (std::size_t i = 0; i < elements.size() && ok(); ++i) read(elements[i], item_path(path_of(key), i));
  }
  // Reads each element of the array at `key` as an object: read(Fields).
  template <class Read>
  void each_object(std::string_view key, Read&& read) const {
    each(key, [&](const nlohmann::json& element, std::string path) { read(child(element, std::move(path))); });
  }

  [[nodiscard]] std::optional<std::string> string(std::string_view key) const {
    return read(key, &FieldReader::string);
  }
  [[nodiscard]] std::optional<std::int64_t> integer(std::string_view key) const {
    return read(key, &FieldReader::integer);
  }
  [[nodiscard]] std::optional<std::int32_t> int32(std::string_view key) const { return read(key, &FieldReader::int32); }
  [[nodiscard]] std::optional<double> number(std::string_view key) const { return read(key, &FieldReader::number); }
  [[nodiscard]] std::optional<bool> boolean(std::string_view key) const { return read(key, &FieldReader::boolean); }
  [[nodiscard]] std::optional<Quantity> quantity(std::string_view key) const {
    return read(key, &FieldReader::quantity);
  }
  [[nodiscard]] std::optional<Timestamp> time(std::string_view key) const { return read(key, &FieldReader::time); }
  template <class E>
  [[nodiscard]] std::optional<E> one_of(std::string_view key,
                                        std::initializer_list<std::pair<std::string_view, E>> choices) const {
    const auto* v = raw(key);
    if (v == nullptr) return std::nullopt;
    E e = reader_->one_of(*v, path_of(key), choices);
    if (!ok()) return std::nullopt;
    return e;
  }

 private:
  template <class T>
  std::optional<T> read(std::string_view key,
                        T (FieldReader::*read_value)(const nlohmann::json&, std::string_view)) const {
    const auto* v = raw(key);
    if (v == nullptr) return std::nullopt;
    T value = (reader_->*read_value)(*v, path_of(key));
    if (!ok()) return std::nullopt;
    return value;
  }

  FieldReader* reader_;
  const nlohmann::json* json_;
  std::string path_;
  UnknownFields unknown_;
};

}  // namespace fedmetrics::k8s

#pragma once
// Random JSON documents for the property tests of the readers of untrusted
// input: every type, nested, with keys and strings drawn from small sets so
// that objects hit the fields a reader asks for and strings are near misses
// of the values it accepts. Seeded by the test, so a failure repeats.
#include <cmath>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fedmetrics::testing {

// A random value nested up to `depth`, with object keys from `keys`.
inline nlohmann::json random_json(std::mt19937& rng, int depth, const std::vector<std::string>& keys) {
  static const char* const strings[] = {"",
                                        "x",
                                        "Red",
                                        "250m",
                                        "-1",
                                        "1e3",
                                        "2024-01-01T00:00:00Z",
                                        "1m30s",
                                        "nope",
                                        "\xc3\xa9",
                                        "9999999999999999999",
                                        "Pods",
                                        "Value",
                                        "True"};
  const int kind = static_cast<int>(rng() % (depth > 0 ? 9 : 7));
  switch (kind) {
    case 0: return nullptr;
    case 1: return rng() % 2 == 0;
    case 2: return static_cast<std::int64_t>(rng()) - (std::int64_t{1} << 31);
    case 3: return static_cast<std::uint64_t>(rng()) << 33;
    case 4: return std::ldexp(static_cast<double>(rng()) / 1000.0, static_cast<int>(rng() % 80) - 40);
    case 5:
    case 6: return strings[rng() % std::size(strings)];
    case 7: {
      nlohmann::json array = nlohmann::json::array();
      for (std::size_t i = rng() % 4; i > 0; --i) array.push_back(random_json(rng, depth - 1, keys));
      return array;
    }
    default: {
      nlohmann::json object = nlohmann::json::object();
      for (std::size_t i = rng() % 6; i > 0 && !keys.empty(); --i)
        object[keys[rng() % keys.size()]] = random_json(rng, depth - 1, keys);
      return object;
    }
  }
}

// Every place in `doc` (the root included), as JSON pointers.
inline void json_places(const nlohmann::json& doc, const nlohmann::json::json_pointer& at,
                        std::vector<nlohmann::json::json_pointer>& out) {
  out.push_back(at);
  if (doc.is_object()) {
    for (const auto& [key, value] : doc.items()) json_places(value, at / key, out);
  } else if (doc.is_array()) {
    for (std::size_t i = 0; i < doc.size(); ++i) json_places(doc[i], at / i, out);
  }
}

// `doc` with one place replaced by a random value, or removed from its object.
inline nlohmann::json mutate_json(nlohmann::json doc, std::mt19937& rng, const std::vector<std::string>& keys) {
  std::vector<nlohmann::json::json_pointer> places;
  json_places(doc, nlohmann::json::json_pointer(), places);
  const auto& place = places[rng() % places.size()];
  if (!place.empty() && rng() % 4 == 0 && doc[place.parent_pointer()].is_object()) {
    doc[place.parent_pointer()].erase(place.back());
  } else {
    doc[place] = random_json(rng, 3, keys);
  }
  return doc;
}

}  // namespace fedmetrics::testing

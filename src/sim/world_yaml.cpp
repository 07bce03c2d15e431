// The YAML-to-JSON step of the world file's reader: yaml-cpp parses the
// text, and the document becomes the JSON value the field reader reads.
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/world_fields.hpp"

namespace fedmetrics::sim::detail {

using k8s::Error;
using k8s::Expected;

namespace {

// "line 3, column 5", where `node` starts in the file.
std::string position(const YAML::Node& node) {
  return "line " + std::to_string(node.Mark().line + 1) + ", column " + std::to_string(node.Mark().column + 1);
}

// A YAML document as JSON, for the field reader: mappings become objects,
// sequences arrays, null stays null, and every other scalar is a string of
// its text as written. YAML's plain scalars carry no type ("port: 8443" and
// "port: '8443'" read alike), so the reads below convert the text as
// yaml-cpp converts a scalar. A key keeps its first value, as a lookup in
// yaml-cpp's node finds it. Aliases are expanded, within bounds: an alias
// inside the node it names, or aliases of aliases that would expand far
// beyond the file, are errors rather than a process that runs out of stack
// or memory.
class YamlToJson {
 public:
  // `text_size`: the document's, in bytes. Without aliases a document holds
  // fewer values than bytes; aliases may add 100,000 more.
  explicit YamlToJson(std::size_t text_size) : max_values_(text_size + 100'000) {}

  Expected<json> convert(const YAML::Node& node, int depth = 0) {
    constexpr int kMaxDepth = 100;
    if (depth > kMaxDepth)
      return Error{"invalid world file: " + position(node) + ": nested more than " + std::to_string(kMaxDepth) +
                   " deep (an alias inside the node it names?)"};
    if (++values_ > max_values_)
      return Error{"invalid world file: " + position(node) + ": more than " + std::to_string(max_values_) +
                   " values once aliases are expanded"};
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null: return json(nullptr);
      case YAML::NodeType::Scalar: return json(node.Scalar());
      case YAML::NodeType::Sequence: {
        json out = json::array();
        for (const auto& element : node) {
          auto converted = convert(element, depth + 1);
          if (!converted) return converted;
          out.push_back(std::move(*converted));
        }
        return out;
      }
      case YAML::NodeType::Map: {
        json out = json::object();
        for (const auto& kv : node) {
          // A key is read as yaml-cpp reads one as a string: a null key is "null", a mapping or list is refused.
          if (!kv.first.IsScalar() && !kv.first.IsNull())
            return Error{"invalid world file: " + std::string(YAML::BadConversion(kv.first.Mark()).what())};
          const std::string key = kv.first.IsNull() ? "null" : kv.first.Scalar();
          auto converted = convert(kv.second, depth + 1);
          if (!converted) return converted;
          if (!out.contains(key)) out[key] = std::move(*converted);
        }
        return out;
      }
    }
    return json(nullptr);
  }

 private:
  std::size_t max_values_;
  std::size_t values_ = 0;
};

// `out` from a scalar's text, as YAML::convert<T> decodes it.
template <class T>
bool decode(const json& value, T& out) {
  return value.is_string() && YAML::convert<T>::decode(YAML::Node(value.get<std::string>()), out);
}

}  // namespace

Expected<json> world_document(std::string_view yaml_text) {
  YAML::Node root;
  // yaml-cpp reports a syntax error by throwing: this is where it becomes an error.
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return Error{"invalid YAML: line " + std::to_string(e.mark.line + 1) + ", column " +
                 std::to_string(e.mark.column + 1) + ": " + e.msg};
  }
  return YamlToJson(yaml_text.size()).convert(root);
}

bool convert_scalar(const json& value, long long& out) { return decode(value, out); }
bool convert_scalar(const json& value, bool& out) { return decode(value, out); }
bool convert_scalar(const json& value, double& out) { return decode(value, out); }

}  // namespace fedmetrics::sim::detail

#pragma once
// The subset of Go's text/template that prometheus-adapter's rules use, with
// its delimiters << and >> (pkg/naming/metrics_query.go NewMetricsQuery,
// pkg/naming/resource_converter.go NewResourceConverter). Private to
// src/promsource.
//
// Supported: text; <<.Field>>; <<.Field.key>> on a map field ("<no value>"
// when the key is absent, as Go prints it); <<index .Field "key">> (the empty
// string when absent, as Go's index gives the zero value); a whole map
// ("map[k:v ...]", keys sorted) or slice ("[a b]") printed as Go's fmt does;
// <<- and ->> trimming; <</* comments */>>. Anything else (if, range, with,
// pipes, functions other than index) and any field the context does not offer
// is an error when the template is parsed, where Go would fail some of them
// only when the query runs.
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::promsource {

// The values a template may name, by field.
struct TemplateContext {
  std::map<std::string, std::string> strings;
  std::map<std::string, std::map<std::string, std::string>> maps;
  std::map<std::string, std::vector<std::string>> slices;
};

// What a field of the context holds: a key or index applies to a map only.
enum class FieldKind { String, Map, Slice };

class GoTemplate {
 public:
  // `fields`: the fields the context will offer, with their kinds (any other
  // field, or a key of a field that is not a map, is an error).
  static k8s::Expected<GoTemplate> parse(std::string_view text, const std::map<std::string, FieldKind>& fields);
  [[nodiscard]] std::string render(const TemplateContext& context) const;
  [[nodiscard]] bool empty() const { return nodes_.empty(); }

 private:
  struct Text {
    std::string text;
  };
  struct Field {
    std::string name;
    std::string key;
    bool has_key = false;
    bool via_index = false;
  };
  std::vector<std::variant<Text, Field>> nodes_;
};

}  // namespace fedmetrics::promsource

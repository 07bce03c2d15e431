#include "promsource/go_template.hpp"

#include <cctype>

namespace fedmetrics::promsource {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Reads a Go string literal ("..." with escapes, or `raw`) at the start of s.
k8s::Expected<std::string> string_literal(std::string_view s, std::size_t& used) {
  if (s.empty()) return k8s::Error{"missing key"};
  if (s.front() == '`') {
    const auto close = s.find('`', 1);
    if (close == std::string_view::npos) return k8s::Error{"unterminated raw quoted string"};
    used = close + 1;
    return std::string(s.substr(1, close - 1));
  }
  if (s.front() != '"') return k8s::Error{"index takes a quoted string key"};
  std::string out;
  for (std::size_t i = 1; i < s.size(); ++i) {
    if (s[i] == '"') {
      used = i + 1;
      return out;
    }
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char e = s[++i];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case '\\': out += '\\'; break;
        case '"': out += '"'; break;
        default: return k8s::Error{std::string("unsupported escape \\") + e + " in string"};
      }
      continue;
    }
    out += s[i];
  }
  return k8s::Error{"unterminated quoted string"};
}

}  // namespace

k8s::Expected<GoTemplate> GoTemplate::parse(std::string_view text, const std::map<std::string, FieldKind>& fields) {
  GoTemplate out;
  std::size_t pos = 0;
  bool trim_next_left = false;
  while (pos < text.size()) {
    const auto open = text.find("<<", pos);
    std::string literal(text.substr(pos, open == std::string_view::npos ? std::string_view::npos : open - pos));
    if (trim_next_left) {
      std::size_t k = 0;
      while (k < literal.size() && is_space(literal[k])) ++k;
      literal.erase(0, k);
    }
    if (open == std::string_view::npos) {
      if (!literal.empty()) out.nodes_.push_back(Text{std::move(literal)});
      break;
    }
    const auto close = text.find(">>", open + 2);
    if (close == std::string_view::npos) return k8s::Error{"unclosed action (no >> after <<)"};
    std::string_view action = text.substr(open + 2, close - open - 2);
    // "<<- " trims the text before, " ->>" the text after (Go needs the space).
    if (action.size() >= 2 && action[0] == '-' && is_space(action[1])) {
      while (!literal.empty() && is_space(literal.back())) literal.pop_back();
      action.remove_prefix(1);
    }
    trim_next_left = false;
    if (action.size() >= 2 && action.back() == '-' && is_space(action[action.size() - 2])) {
      trim_next_left = true;
      action.remove_suffix(1);
    }
    if (!literal.empty()) out.nodes_.push_back(Text{std::move(literal)});
    pos = close + 2;
    action = trim(action);
    if (action.starts_with("/*")) {
      if (!action.ends_with("*/")) return k8s::Error{"unclosed comment"};
      continue;
    }
    const std::string shown = "<<" + std::string(action) + ">>";
    Field field;
    if (action.starts_with("index") && action.size() > 5 && is_space(action[5])) {
      std::string_view args = trim(action.substr(5));
      if (!args.starts_with(".")) return k8s::Error{"in " + shown + ": index takes a field and a key"};
      std::size_t n = 1;
      while (n < args.size() && ident_char(args[n])) ++n;
      field.name = std::string(args.substr(1, n - 1));
      std::size_t used = 0;
      auto key = string_literal(trim(args.substr(n)), used);
      if (!key) return key.error().at("in " + shown);
      if (!trim(trim(args.substr(n)).substr(used)).empty())
        return k8s::Error{"in " + shown + ": index takes one key here"};
      field.key = *key;
      field.has_key = true;
      field.via_index = true;
    } else if (action.starts_with(".")) {
      std::size_t n = 1;
      while (n < action.size() && ident_char(action[n])) ++n;
      field.name = std::string(action.substr(1, n - 1));
      std::string_view rest = action.substr(n);
      if (rest.starts_with(".")) {
        std::size_t m = 1;
        while (m < rest.size() && ident_char(rest[m])) ++m;
        field.key = std::string(rest.substr(1, m - 1));
        field.has_key = true;
        rest = rest.substr(m);
      }
      if (!rest.empty() || field.name.empty() || (field.has_key && field.key.empty())) {
        return k8s::Error{"unsupported action " + shown + " (only fields, map keys and index are supported)"};
      }
    } else {
      return k8s::Error{"unsupported action " + shown + " (only fields, map keys and index are supported)"};
    }
    const auto kind = fields.find(field.name);
    if (kind == fields.end()) {
      std::string known;
      for (const auto& [f, k] : fields) known += (known.empty() ? "." : ", .") + f;
      return k8s::Error{"in " + shown + ": can't evaluate field " + field.name + " (the fields are " + known + ")"};
    }
    if (field.has_key && kind->second != FieldKind::Map) {
      return k8s::Error{"in " + shown + ": ." + field.name + " is not a map, it has no keys"};
    }
    out.nodes_.push_back(std::move(field));
  }
  return out;
}

std::string GoTemplate::render(const TemplateContext& context) const {
  std::string out;
  for (const auto& node : nodes_) {
    if (const auto* text = std::get_if<Text>(&node)) {
      out += text->text;
      continue;
    }
    const auto& field = std::get<Field>(node);
    if (auto s = context.strings.find(field.name); s != context.strings.end()) {
      // A key on a string is an error in Go at execution; the parser's field
      // list makes that a map field, so this is only the plain case.
      if (!field.has_key) out += s->second;
      continue;
    }
    if (auto m = context.maps.find(field.name); m != context.maps.end()) {
      if (field.has_key) {
        auto v = m->second.find(field.key);
        if (v != m->second.end()) out += v->second;
        else if (!field.via_index) out += "<no value>";
        continue;
      }
      out += "map[";
      bool first = true;
      for (const auto& [k, v] : m->second) {
        if (!first) out += ' ';
        first = false;
        out += k + ":" + v;
      }
      out += ']';
      continue;
    }
    if (auto sl = context.slices.find(field.name); sl != context.slices.end()) {
      out += '[';
      for (std::size_t i = 0; i < sl->second.size(); ++i) out += (i ? " " : "") + sl->second[i];
      out += ']';
    }
  }
  return out;
}

}  // namespace fedmetrics::promsource

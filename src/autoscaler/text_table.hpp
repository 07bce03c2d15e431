#pragma once
// Rows of cells as aligned text, two spaces between columns, no trailing
// blanks: the tables `simulate` and `explain` print.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace fedmetrics::autoscaler::detail {

inline std::string aligned(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(widths[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();  // an empty last cell
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace fedmetrics::autoscaler::detail

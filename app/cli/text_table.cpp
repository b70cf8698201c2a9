// text_table.cpp — columns sized to their widest cell (text_table.h).
#include "cli/text_table.h"

#include <algorithm>

namespace diffscope::cli {

size_t display_width(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string TextTable::str() const {
  std::vector<size_t> width(header.size(), 0);
  auto widen = [&width](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size() && c < width.size(); ++c) width[c] = std::max(width[c], display_width(cells[c]));
  };
  widen(header);
  for (const auto& r : rows) widen(r);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const std::string pad(width[c] - display_width(cell), ' ');
      out += (c ? "  " : "") + (c < right.size() && right[c] ? pad + cell : cell + pad);
    }
    return out.substr(0, out.find_last_not_of(' ') + 1) + "\n";
  };
  std::string out = line(header);
  for (const auto& r : rows) out += line(r);
  return out;
}

}  // namespace diffscope::cli

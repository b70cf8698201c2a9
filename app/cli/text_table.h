// text_table.h — a plain-text table whose columns are as wide as their widest cell (header included), so that
// long cells (a GPU row's path "cublas+elementwise", a 45-character workload name) do not shift the columns.
#pragma once
#include <string>
#include <vector>

namespace diffscope::cli {

struct TextTable {
  std::vector<std::string> header;
  std::vector<bool> right;                     // per column: right-aligned (numbers) or left-aligned (text)
  std::vector<std::vector<std::string>> rows;  // each as many cells as the header

  // The table, one line per row after the header, columns two spaces apart, no trailing spaces. Widths count
  // UTF-8 characters, not bytes ("—" is one column).
  std::string str() const;
};

// The number of characters of UTF-8 text `s` (its bytes that do not continue a multi-byte character).
size_t display_width(const std::string& s);

}  // namespace diffscope::cli

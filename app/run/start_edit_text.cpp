// start_edit_text.cpp — picked rows and edited starts as text (the settings keys `picks`, `start_edits`; start_edit.h).
#include "run/start_edit.h"

#include <charconv>
#include <cmath>
#include <set>

#include "base/errors.h"
#include "base/words.h"

namespace diffscope {
namespace {

bool empty_list(const std::string& t) { return t.empty() || t == "none"; }

int parse_row(const std::string& arg, const std::string& text, const std::string& word) {
  int v = 0;
  const auto r = std::from_chars(word.data(), word.data() + word.size(), v);
  if (word.empty() || r.ec != std::errc() || r.ptr != word.data() + word.size() || !kPickRowRange.contains(v))
    throw InvalidInput(arg + " = '" + text + "': '" + word + "' is not a row in [0, " +
                       std::to_string(kPickRowRange.hi) + "]");
  return v;
}

float parse_value(const std::string& arg, const std::string& text, const std::string& word) {
  float v = 0;
  const auto r = std::from_chars(word.data(), word.data() + word.size(), v);
  if (word.empty() || r.ec != std::errc() || r.ptr != word.data() + word.size() || !std::isfinite(v))
    throw InvalidInput(arg + " = '" + text + "': '" + word + "' is not a finite number");
  return v;
}

void check_count(const std::string& arg, const std::string& text, size_t n) {
  if (n > static_cast<size_t>(kMaxPicks))
    throw InvalidInput(arg + " = '" + text + "': " + std::to_string(n) + " rows; valid: at most " +
                       std::to_string(kMaxPicks));
}

}  // namespace

std::string picks_text(const std::vector<int>& rows) {
  std::string s;
  for (int r : rows) s += (s.empty() ? "" : ",") + std::to_string(r);
  return s;
}

std::vector<int> parse_picks(const std::string& arg, const std::string& text) {
  std::vector<int> rows;
  if (empty_list(text)) return rows;
  std::set<int> seen;
  for (const std::string& w : split(text, ',')) {
    const int r = parse_row(arg, text, w);
    if (!seen.insert(r).second) throw InvalidInput(arg + " = '" + text + "': row " + w + " is given twice");
    rows.push_back(r);
  }
  check_count(arg, text, rows.size());
  return rows;
}

std::string start_edits_text(const std::vector<StartEdit>& edits) {
  std::string s;
  for (const StartEdit& e : edits) {
    s += (s.empty() ? "" : ";") + std::to_string(e.row) + ":";
    for (size_t d = 0; d < e.x.size(); ++d) {
      char buf[32];
      const auto r = std::to_chars(buf, buf + sizeof buf, e.x[d]);  // shortest text that reads back exactly
      s += (d ? "," : "") + std::string(buf, r.ptr);
    }
  }
  return s;
}

std::vector<StartEdit> parse_start_edits(const std::string& arg, const std::string& text) {
  std::vector<StartEdit> edits;
  if (empty_list(text)) return edits;
  std::set<int> seen;
  for (const std::string& item : split(text, ';')) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos)
      throw InvalidInput(arg + " = '" + text + "': '" + item + "' is not ROW:X0,X1,...");
    StartEdit e;
    e.row = parse_row(arg, text, item.substr(0, colon));
    for (const std::string& w : split(item.substr(colon + 1), ',')) e.x.push_back(parse_value(arg, text, w));
    if (!seen.insert(e.row).second)
      throw InvalidInput(arg + " = '" + text + "': row " + std::to_string(e.row) + " is given twice");
    if (!edits.empty() && e.x.size() != edits.front().x.size())
      throw InvalidInput(arg + " = '" + text + "': the edits have different lengths (" +
                         std::to_string(edits.front().x.size()) + " and " + std::to_string(e.x.size()) + ")");
    edits.push_back(std::move(e));
  }
  check_count(arg, text, edits.size());
  return edits;
}

}  // namespace diffscope

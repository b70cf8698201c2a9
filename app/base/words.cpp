// words.cpp — see words.h.
#include "base/words.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace diffscope {

std::string count_noun(long long n, const std::string& singular, const std::string& plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural.empty() ? singular + "s" : plural);
}

size_t edit_distance(const std::string& a, const std::string& b) {  // two rows of the dynamic programme
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string nearest_name(const std::string& word, const std::vector<std::string>& names, size_t min_prefix) {
  std::string best, prefix_of;
  size_t best_d = 3, prefixed = 0;
  for (const std::string& name : names) {
    const size_t d = edit_distance(word, name);
    if (d < best_d) best_d = d, best = name;
    if (word.size() > min_prefix && name.compare(0, word.size(), word) == 0) ++prefixed, prefix_of = name;
  }
  if (best.empty() && prefixed == 1) return prefix_of;
  return best;
}

std::string after_label(const std::string& message, const std::string& label) {
  const std::string head = label + ": ";
  return !label.empty() && message.rfind(head, 0) == 0 ? message.substr(head.size()) : message;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t a = 0;
  for (size_t b; (b = s.find(sep, a)) != std::string::npos; a = b + 1) out.push_back(s.substr(a, b - a));
  out.push_back(s.substr(a));
  return out;
}

std::string short_number(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

std::string round_trip_number(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.15g", v);
  if (std::strtod(b, nullptr) != v) std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

}  // namespace diffscope

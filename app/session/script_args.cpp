// script_args.cpp — splitting and reading a headless script line (see script_args.h).
#include "session/script_args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "base/errors.h"

namespace diffscope {
namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

std::string int_range_text(IntRange r) { return "[" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + "]"; }
std::string real_range_text(RealRange r) {
  std::ostringstream s;
  s << "[" << r.lo << ", " << r.hi << "]";
  return s.str();
}

}  // namespace

std::vector<std::string> script_words(const std::string& line) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && blank(line[i])) ++i;
    if (i >= line.size() || line[i] == '#') break;
    std::string w;
    while (i < line.size() && !blank(line[i]) && line[i] != '#') {
      if (line[i] != '"') {
        w += line[i++];
        continue;
      }
      const size_t open = i++;
      for (;;) {
        if (i >= line.size())
          throw InvalidInput("a quote opened at column " + std::to_string(open + 1) +
                             " is not closed; valid: \"a value with blanks\"");
        if (line[i] == '"') break;
        if (line[i] == '\\' && i + 1 < line.size() && (line[i + 1] == '"' || line[i + 1] == '\\')) ++i;
        w += line[i++];
      }
      ++i;  // the closing quote
    }
    words.push_back(w);
  }
  return words;
}

ScriptArgs ScriptArgs::describing(std::string command) {
  ScriptArgs a(std::move(command), {});
  a.m_describing = true;
  return a;
}

void ScriptArgs::record(const std::string& what, const std::string& valid, bool optional, const std::string& fallback) {
  if (m_describing) m_specs.push_back({what, valid, fallback, optional});
}

std::string ScriptArgs::word(const std::string& what) {
  if (m_describing) return record(what, "", false, ""), std::string();
  if (!more()) throw InvalidInput(m_cmd + ": missing " + what);
  return m_words[m_next++];
}

std::string ScriptArgs::word_or(const std::string& what, const std::string& fallback) {
  if (m_describing) return record(what, "", true, fallback), fallback;
  return more() ? m_words[m_next++] : fallback;
}

namespace {
std::string one_of(const std::vector<std::string>& options) {
  std::string s = "one of:";
  for (const std::string& o : options) s += " " + o;
  return s;
}
}  // namespace

std::string ScriptArgs::choice(const std::string& what, const std::vector<std::string>& options) {
  if (m_describing) return record(what, one_of(options), false, ""), options.front();
  const std::string w = word(what + " (" + one_of(options) + ")");
  for (const std::string& o : options)
    if (w == o) return w;
  throw InvalidInput(m_cmd + ": " + what + " = '" + w + "' is not valid; valid: " + one_of(options));
}

std::string ScriptArgs::choice_or(const std::string& what, const std::vector<std::string>& options,
                                  const std::string& fallback) {
  if (m_describing) return record(what, one_of(options), true, fallback), fallback;
  return more() ? choice(what, options) : fallback;
}

int64_t ScriptArgs::integer(const std::string& what, IntRange r) {
  if (m_describing) return record(what, "an integer in " + int_range_text(r), false, ""), r.lo;
  const std::string text = word(what + " " + int_range_text(r));
  const std::string valid = "; valid: an integer in " + int_range_text(r);
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  const bool digits = !text.empty() && end == text.c_str() + text.size();
  if (!digits) throw InvalidInput(m_cmd + ": " + what + " = '" + text + "' is not an integer" + valid);
  if (errno == ERANGE || !r.contains(v)) throw InvalidInput(m_cmd + ": " + what + " = " + text + " is out of range" + valid);
  return v;
}

int64_t ScriptArgs::integer_or(const std::string& what, IntRange r, int64_t fallback) {
  // A fallback outside the range stands for "not given" (the command decides): described as optional, no default.
  if (m_describing)
    return record(what, "an integer in " + int_range_text(r), true, r.contains(fallback) ? std::to_string(fallback) : ""),
           fallback;
  return more() ? integer(what, r) : fallback;
}

double ScriptArgs::real(const std::string& what, RealRange r) {
  if (m_describing) return record(what, "a number in " + real_range_text(r), false, ""), r.lo;
  const std::string text = word(what + " " + real_range_text(r));
  const std::string valid = "; valid: a number in " + real_range_text(r);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    throw InvalidInput(m_cmd + ": " + what + " = '" + text + "' is not a finite number" + valid);
  if (!r.contains(v)) throw InvalidInput(m_cmd + ": " + what + " = " + text + " is out of range" + valid);
  return v;
}

double ScriptArgs::real_or(const std::string& what, RealRange r, double fallback) {
  if (m_describing) {
    std::ostringstream f;
    f << fallback;
    return record(what, "a number in " + real_range_text(r), true, f.str()), fallback;
  }
  return more() ? real(what, r) : fallback;
}

void ScriptArgs::end() const {
  if (m_describing) throw Described{};
  if (!more()) return;
  std::string rest;
  for (size_t k = m_next; k < m_words.size(); ++k) rest += (rest.empty() ? "'" : " '") + m_words[k] + "'";
  throw InvalidInput(m_cmd + ": unexpected extra " + (m_words.size() - m_next == 1 ? "word " : "words ") + rest +
                     "; a value with blanks goes in double quotes (set export_dir \"/a/my folder\")");
}

}  // namespace diffscope

// script_args.h — the words of one headless script line (app/shell/headless.cpp) and strict readers for them.
// A line splits on blanks; a word in double quotes keeps its blanks and '#' ("/a/sp ace"; \" and \\ inside quotes
// stand for " and \); '#' outside quotes starts a comment. Each command reads its words in order and then calls
// end(): a word it does not take is an error, never dropped (README "Headless scripts").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/ranges.h"

namespace diffscope {

// The words of `line` as above. Throws InvalidInput for a quote left open.
std::vector<std::string> script_words(const std::string& line);

// One argument of a command as a describing ScriptArgs recorded it (the script's help is made of these).
struct ScriptArgSpec {
  std::string what;      // its name as messages give it: "N", "PATH", "KEY"
  std::string valid;     // what it takes: "an integer in [0, 1000000]", "one of: cpu gpu", "" (any word)
  std::string fallback;  // optional: the value when the line has no more words ("" with `optional`: none)
  bool optional = false;
};

class ScriptArgs {
 public:
  // `words`: a line's words after the command's name `command` (named in every message).
  ScriptArgs(std::string command, std::vector<std::string> words) : m_cmd(std::move(command)), m_words(std::move(words)) {}
  // A reader that reads no words but records each argument the command asks for (its name, range, default):
  // word() gives "", choice() its first option, numbers their range's low end, and end() throws Described.
  // Running a command's parser with it gives that command's arguments exactly as the parser reads them.
  static ScriptArgs describing(std::string command);
  struct Described {};
  const std::vector<ScriptArgSpec>& described() const { return m_specs; }
  bool describing() const { return m_describing; }
  bool more() const { return !m_describing && m_next < m_words.size(); }
  // The next word; throws InvalidInput "COMMAND: missing WHAT" when there is none.
  std::string word(const std::string& what);
  // The next word, or `fallback` when the line has no more.
  std::string word_or(const std::string& what, const std::string& fallback);
  // The next word, one of `options` (else InvalidInput naming them); choice_or: `fallback` when there is none.
  std::string choice(const std::string& what, const std::vector<std::string>& options);
  std::string choice_or(const std::string& what, const std::vector<std::string>& options, const std::string& fallback);
  // The next word as an integer in `r` (or `fallback` when the line has no more; no fallback: required; a fallback
  // outside `r` means "not given", shown by --script-help as optional with no default).
  // Throws InvalidInput naming the command, WHAT, the text and the range for a non-integer or one outside.
  int64_t integer(const std::string& what, IntRange r);
  int64_t integer_or(const std::string& what, IntRange r, int64_t fallback);
  // The next word as a finite number in `r`, as above.
  double real(const std::string& what, RealRange r);
  double real_or(const std::string& what, RealRange r, double fallback);
  // Throws InvalidInput naming the words left over (a value with blanks goes in double quotes).
  void end() const;

 private:
  void record(const std::string& what, const std::string& valid, bool optional, const std::string& fallback);
  std::string m_cmd;
  std::vector<std::string> m_words;
  size_t m_next = 0;
  bool m_describing = false;
  std::vector<ScriptArgSpec> m_specs;
};

}  // namespace diffscope

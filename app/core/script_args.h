// script_args.h — the words of one headless script line (app/shell/headless.cpp) and strict readers for them.
// A line splits on blanks; a word in double quotes keeps its blanks and '#' ("/a/sp ace"; \" and \\ inside quotes
// stand for " and \); '#' outside quotes starts a comment. Each command reads its words in order and then calls
// end(): a word it does not take is an error, never dropped (README "Headless scripts").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/ranges.h"

namespace diffscope {

// The words of `line` as above. Throws InvalidInput for a quote left open.
std::vector<std::string> script_words(const std::string& line);

class ScriptArgs {
 public:
  // `words`: a line's words after the command's name `command` (named in every message).
  ScriptArgs(std::string command, std::vector<std::string> words) : m_cmd(std::move(command)), m_words(std::move(words)) {}
  bool more() const { return m_next < m_words.size(); }
  // The next word; throws InvalidInput "COMMAND: missing WHAT" when there is none.
  std::string word(const std::string& what);
  // The next word, or `fallback` when the line has no more.
  std::string word_or(const std::string& fallback);
  // The next word as an integer in `r` (or `fallback` when the line has no more; no fallback: required).
  // Throws InvalidInput naming the command, WHAT, the text and the range for a non-integer or one outside.
  int64_t integer(const std::string& what, IntRange r);
  int64_t integer_or(const std::string& what, IntRange r, int64_t fallback);
  // The next word as a finite number in `r`, as above.
  double real(const std::string& what, RealRange r);
  double real_or(const std::string& what, RealRange r, double fallback);
  // Throws InvalidInput naming the words left over (a value with blanks goes in double quotes).
  void end() const;

 private:
  std::string m_cmd;
  std::vector<std::string> m_words;
  size_t m_next = 0;
};

}  // namespace diffscope

// parse_errors.h — CLI11's parse errors in the CLI's own words (SEMANTICS §9): the argument, the value and the
// valid range, or for an unknown option the nearest known one.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace diffscope::cli {

// One line for `e`, thrown while `app` parsed: a value that does not convert ("--n = '1e3' is not an integer;
// valid: [1, 1000000]", the range read from the option's help text "in [lo, hi]"), an unknown option ("--setps is
// not an option of diffscope sample (did you mean --steps?)"); other errors keep CLI11's text. Ends with where to
// find the help.
std::string explain_parse_error(const CLI::App& app, const CLI::ParseError& e);

// Makes every integer option of `app` and its subcommands (type name INT / UINT) refuse text that is not a whole
// 64-bit integer — "" and "99999999999999999999" included, which CLI11 reads as 0 and as the largest value, so the
// range check named a value nobody typed — as a ConversionError (explain_parse_error: "--n = '' is not an
// integer; valid: [1, 1000000]"). Call once, after every option is added.
void check_integer_text(CLI::App& app);

// The option of `sub` whose long name is nearest to `word` (Levenshtein distance at most 2, or `word` a prefix
// of exactly one), e.g. "--setps" -> "--steps"; "" when none is near.
std::string nearest_option(const CLI::App& sub, const std::string& word);

}  // namespace diffscope::cli

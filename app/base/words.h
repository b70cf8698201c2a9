// words.h — the words of messages: a count with its noun in the right number ("1 step", "3 steps"), the
// known name nearest to a mistyped one (the CLI's options and commands, the headless script's commands), numbers
// as messages and files show them, a message put after a label that it already starts with, and a list split at
// its separators.
#pragma once
#include <string>
#include <vector>

namespace diffscope {

// "1 step", "0 steps", "2 steps"; `plural` defaults to `singular` + "s" ("1 read-back", "3 read-backs").
std::string count_noun(long long n, const std::string& singular, const std::string& plural = "");

// Levenshtein distance between a and b (insertions, deletions and substitutions of one byte each).
size_t edit_distance(const std::string& a, const std::string& b);

// The name in `names` nearest to `word`: the first one at the smallest edit distance when that is at most 2,
// else the one name that starts with `word` (when `word` has more than `min_prefix` bytes and exactly one name
// does); "" when none is near ("sett" -> "set", "setps" -> "steps").
std::string nearest_name(const std::string& word, const std::vector<std::string>& names, size_t min_prefix = 2);

// The parts of `s` between the separators `sep`, empty ones included: "a,,b" -> {"a", "", "b"}, "" -> {""}.
std::vector<std::string> split(const std::string& s, char sep);

// v as messages show a measured or derived value: 6 significant digits (%.6g: 0.000123457, 1e+06, inf).
std::string short_number(double v);
// v as settings and files write a value given by the user: the shortest of %.15g and %.17g that reads back as v
// (0.1 -> "0.1", 0.0 -> "0", 1/3 -> "0.333333333333333").
std::string round_trip_number(double v);

// `message` without a leading "label: " (a loader's error names its file first; a caller that names the file
// itself puts the rest after it: "model a.safetensors: __metadata__ ...", not "... a.safetensors: a.safetensors: ...").
std::string after_label(const std::string& message, const std::string& label);

}  // namespace diffscope

// parse_errors.cpp — CLI11's parse errors rewritten to name the argument, the value and the valid range.
#include "cli/parse_errors.h"

#include <algorithm>
#include <charconv>
#include <regex>
#include <vector>

#include "base/words.h"

namespace diffscope::cli {
namespace {

// The subcommand being parsed (the last one named), else the app itself.
const CLI::App& parsed_command(const CLI::App& app) {
  const CLI::App* sub = &app;
  for (const CLI::App* s : app.get_subcommands()) sub = s;
  return *sub;
}

std::string command_name(const CLI::App& app, const CLI::App& sub) {
  return &sub == &app ? std::string("diffscope") : "diffscope " + sub.get_name();
}

// "Could not convert: --n = 1e3" -> "--n = '1e3' is not an integer; valid: [1, 1000000]".
std::string conversion(const CLI::App& sub, const std::string& what) {
  static const std::regex kConvert("Could not convert: (\\S+) = (.*)");
  std::smatch m;
  if (!std::regex_match(what, m, kConvert)) return what;
  const std::string name = m[1], value = m[2];
  const CLI::Option* opt = sub.get_option_no_throw(name);
  if (!opt) return name + " = '" + value + "' is not valid";
  const std::string type = opt->get_type_name();
  const std::string kind = type == "INT"     ? "an integer"
                           : type == "UINT"  ? "a non-negative integer"
                           : type == "FLOAT" ? "a number"
                                             : "a value of type " + type;
  static const std::regex kRange("in (\\[[^\\]]*\\])");
  std::smatch r;
  const std::string help = opt->get_description();
  return name + " = '" + value + "' is not " + kind +
         (std::regex_search(help, r, kRange) ? "; valid: " + r[1].str() : std::string());
}

// "The following arguments were not expected: 3 --setps" -> the first stray option, with the nearest known one.
std::string extras(const CLI::App& app, const CLI::App& sub, const std::string& what) {
  std::vector<std::string> stray = sub.remaining();
  if (stray.empty()) return what;
  auto opt = std::find_if(stray.begin(), stray.end(), [](const std::string& a) { return a.size() > 1 && a[0] == '-'; });
  if (opt == stray.end()) {
    // The top level and gui take one FILE (an existing file, .safetensors, .png or .json); a near miss of a
    // command name is most likely a typo of the command (`diffscope smaple`).
    const bool takes_file = &sub == &app || sub.get_name() == "gui";
    std::string near_cmd;
    if (&sub == &app) {
      std::vector<std::string> commands;
      for (const CLI::App* c : app.get_subcommands([](const CLI::App*) { return true; })) commands.push_back(c->get_name());
      near_cmd = nearest_name(stray.front(), commands, ~size_t(0));  // a typo, never a prefix (a FILE may be one)
    }
    return "unexpected argument '" + stray.front() + "' (" + command_name(app, sub) +
           (takes_file ? " takes options and one FILE: an existing file, .safetensors, .png or .json"
                       : " takes options only") +
           (near_cmd.empty() ? "" : "; did you mean the command '" + near_cmd + "'?") + ")";
  }
  const std::string word = opt->substr(0, opt->find('='));
  const std::string near = nearest_option(sub, word);
  return word + " is not an option of " + command_name(app, sub) + (near.empty() ? "" : " (did you mean " + near + "?)");
}

}  // namespace

std::string nearest_option(const CLI::App& sub, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::Option* o : sub.get_options())
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
  return nearest_name(word, names);
}

void check_integer_text(CLI::App& app) {
  std::vector<CLI::App*> apps{&app};
  for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; })) apps.push_back(s);
  for (CLI::App* a : apps) {
    for (CLI::Option* o : a->get_options([](CLI::Option*) { return true; })) {
      const std::string type = o->get_type_name();
      if (type != "INT" && type != "UINT") continue;
      const std::string name = o->get_name();
      const bool is_unsigned = type == "UINT";
      o->check(CLI::Validator(
          [name, is_unsigned](std::string& v) -> std::string {
            const char *b = v.data(), *end = v.data() + v.size();
            long long s = 0;
            unsigned long long u = 0;
            const std::from_chars_result r = is_unsigned ? std::from_chars(b, end, u) : std::from_chars(b, end, s);
            if (v.empty() || r.ec != std::errc() || r.ptr != end) throw CLI::ConversionError(name, std::vector<std::string>{v});
            return "";
          },
          "", "integer text"));
    }
  }
}

std::string explain_parse_error(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App& sub = parsed_command(app);
  std::string m = e.what();
  if (dynamic_cast<const CLI::ConversionError*>(&e)) m = conversion(sub, m);
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) m = extras(app, sub, m);
  return m + "; see " + command_name(app, sub) + " --help";
}

}  // namespace diffscope::cli

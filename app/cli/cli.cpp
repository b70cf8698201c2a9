// cli.cpp — the CLI entry point: registers every subcommand, parses, runs the chosen action and maps
// errors to exit codes (SEMANTICS §9: 0 ok, 2 bad input/usage, 3 resource unavailable, 1 internal).
#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "base/arg_error.h"
#include "base/errors.h"
#include "cli/cli_util.h"
#include "cli/parse_errors.h"
#include "formats/json_path.h"
#include "kernels/plan/kernel_plan.h"
#include "platform/stop_signal.h"

namespace diffscope::cli {
namespace {

#ifdef DIFFSCOPE_HAVE_GUI
// A positional argument that names a file for the app: not a subcommand, and ends in .safetensors or is an
// existing regular file (a model, or an export's .png / .json to restore).
bool is_model_file_arg(const CLI::App& app, const std::string& a) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->check_name(a)) return false;
  std::string ext = std::filesystem::path(a).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  std::error_code ec;
  return ext == ".safetensors" || ext == ".png" || ext == ".json" || std::filesystem::is_regular_file(a, ec);
}
#endif

// The one error line; bytes that are not well-formed UTF-8 (a file name, a foreign PNG's text) as the text \xHH,
// as the sidecars write them, so that a terminal never receives a raw byte.
int fail(int code, const std::string& message) {
  std::fprintf(stderr, "diffscope: error: %s\n", escape_invalid_utf8(message).c_str());
  return code;
}

// Parses and runs; exceptions escape to main().
int parse_and_run(CLI::App& app, Action& action, int argc, char** argv) {
  check_integer_text(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);  // help on stdout, exit 0
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(2, explain_parse_error(app, e));  // names the argument, the value and the range (parse_errors.h)
  }
  apply_threads_option(app);
  if (!action) {
#ifdef DIFFSCOPE_HAVE_GUI
    // No subcommand: open the desktop app, as `diffscope gui` does.
    std::vector<std::string> gui_args{"gui"};
    app.parse(gui_args);
    if (action) {
      action();
      return 0;
    }
#endif
    std::printf("%s", app.help().c_str());
    return 0;
  }
  action();
  return 0;
}

// DIFFSCOPE_KERNEL_OPTIONS (README "Kernel options") checked for every command, with or without a CUDA device: a
// key or value the kernel plan does not know is exit 2 naming it (the CUDA backend applies the options).
void check_kernel_options_env() {
  const char* env = std::getenv("DIFFSCOPE_KERNEL_OPTIONS");
  if (!env) return;
  kernels::KernelOptions options;
  try {
    kernels::set_kernel_options(options, env);
  } catch (const InvalidInput& e) {
    throw InvalidInput(std::string("DIFFSCOPE_KERNEL_OPTIONS: ") + e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"diffscope — explore diffusion sampling: a fused multi-step DDPM denoiser on the GPU or CPU",
               "diffscope"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", "diffscope 0.1.0");
  Action action;
  register_denoise(app, action);
  register_sample(app, action);
  register_mlp3(app, action);
  register_info(app, action);
  register_train(app, action);
  register_bench(app, action);
#ifdef DIFFSCOPE_HAVE_GUI
  register_gui(app, action);
#endif
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (sub->get_name() != "info") add_threads_option(*sub);  // every command that computes
#ifdef DIFFSCOPE_HAVE_GUI
  // `diffscope --model digits8x8` means `diffscope gui --model digits8x8`: options without a subcommand are
  // the app's (the top level itself has only --help and --version).
  std::vector<char*> args(argv, argv + argc);
  // `diffscope FILE` (a file manager's "Open with", the .desktop entry's %f) means `diffscope gui FILE`: a model
  // (gui --model FILE), or an export's .png / .json sidecar (gui --restore FILE; gui_command.cpp tells them apart).
  if (argc > 1 && argv[1][0] != '-' && is_model_file_arg(app, argv[1])) {
    static char gui_word[] = "gui";
    args.insert(args.begin() + 1, gui_word);
  }
  if (args.size() > 1 && args[1][0] == '-') {
    const std::string first = args[1];
    if (first != "-h" && first != "--help" && first != "--help-all" && first != "--version") {
      static char gui_word[] = "gui";
      args.insert(args.begin() + 1, gui_word);
    }
  }
  argc = static_cast<int>(args.size());
  argv = args.data();
#endif
  try {
    check_kernel_options_env();
    return parse_and_run(app, action, argc, argv);
  } catch (const ArgumentError& e) {  // the core names the argument by id: the CLI spells it as its flag
    return fail(2, e.message(cli_flag));
  } catch (const InvalidInput& e) {
    return fail(2, e.what());
  } catch (const ResourceUnavailable& e) {
    return fail(3, e.what());
  } catch (const Interrupted& e) {  // SIGINT / SIGTERM in a long loop: 128 + the signal, as a shell reports it
    return fail(128 + e.signo, e.what());
  } catch (const std::bad_alloc&) {
    return fail(3, "out of memory");
  } catch (const CLI::ParseError& e) {
    return fail(2, e.what());
  } catch (const std::exception& e) {
    return fail(1, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(1, "internal error: unknown exception");
  }
}

}  // namespace diffscope::cli

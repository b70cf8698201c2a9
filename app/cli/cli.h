// cli.h — the command-line interface (CLI11). Each subcommand lives in its own file and registers itself
// through a register_* function listed in cli.cpp. Exit codes follow SEMANTICS §9:
// 0 ok, 2 bad input/usage, 3 resource unavailable, 1 internal error.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "run/run_plan.h"

namespace CLI { class App; }

namespace diffscope::cli {

// A subcommand's action; it runs after parsing and may throw InvalidInput / ResourceUnavailable.
using Action = std::function<void()>;

// Parses argv, runs the chosen subcommand (or the GUI when there is none and the GUI is built), maps
// exceptions to exit codes and prints one line "diffscope: error: ..." on stderr.
int main(int argc, char** argv);

// Registration hooks: each adds one subcommand to `app` and sets `action` when it is chosen.
void register_denoise(CLI::App& app, Action& action);
void register_sample(CLI::App& app, Action& action);
// `sample`'s arguments (those after "sample"; no --config) as the sampling request its run plans
// (run/run_plan.h), without loading the model. Throws CLI11's parse errors and InvalidInput.
SampleRequest sample_request_of(const std::vector<std::string>& args);
void register_mlp3(CLI::App& app, Action& action);
void register_info(CLI::App& app, Action& action);
void register_train(CLI::App& app, Action& action);  // `diffscope train`: the CPU trainer (app/train/)
void register_bench(CLI::App& app, Action& action);  // defined by the GPU layer's bench (stub without CUDA)
#ifdef DIFFSCOPE_HAVE_GUI
void register_gui(CLI::App& app, Action& action);    // `diffscope gui` and the no-subcommand default
#endif

}  // namespace diffscope::cli

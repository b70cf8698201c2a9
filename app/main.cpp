// main.cpp — diffscope's entry point: with no subcommand it opens the desktop app (when built with the GUI),
// otherwise it runs a CLI subcommand (app/cli).
#include "cli/cli.h"

int main(int argc, char** argv) { return diffscope::cli::main(argc, argv); }

// npuplan: graph → verified multi-stream execution plan. See README.md.
#include <cstdio>
#include <exception>
#include <map>

#include "CLI/CLI.hpp"
#include "tools/malloc/allocator_info.h"
#include "tools/npuplan/command.h"

namespace npuplan::cli {
namespace {
std::map<std::string, CommandSetup>& Registry() {
  static std::map<std::string, CommandSetup> registry;
  return registry;
}
}  // namespace

bool RegisterCommand(const std::string& name, CommandSetup setup) {
  Registry()[name] = std::move(setup);
  return true;
}

void AddRegisteredCommands(CLI::App& app, Invocation& inv) {
  for (auto& [name, setup] : Registry()) setup(app, inv);
}

int ReportStatus(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
  return kExitInvalid;
}
}  // namespace npuplan::cli

int main(int argc, char** argv) {
  using namespace npuplan::cli;
  CLI::App app{"npuplan: turns a computation graph into a verified execution plan for an "
               "accelerator with hardware streams",
               "npuplan"};
  app.set_version_flag("--version", std::string("npuplan ") + NPUPLAN_VERSION + "\nallocator: " +
                                        npuplan::AllocatorDescription());
  app.require_subcommand(1);
  Invocation inv;
  AddRegisteredCommands(app, inv);
  // No command at all: show what there is (CLI11 alone says only "A
  // subcommand is required").
  if (argc <= 1) {
    std::fputs(app.help().c_str(), stdout);
    return kExitUsage;
  }
  // CLI11 reports an unknown first word only as "A subcommand is required": name it.
  if (argc > 1 && argv[1][0] != '-' && Registry().count(argv[1]) == 0) {
    std::string names;
    for (const auto& [name, setup] : Registry()) names += (names.empty() ? "" : ", ") + name;
    std::fprintf(stderr, "error: unknown command '%s' (commands: %s; see --help)\n", argv[1], names.c_str());
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // --help and --version exit 0; every other parse error is a usage error.
    return rc == 0 ? 0 : kExitUsage;
  } catch (const std::exception& e) {
    // Library errors are Status values; an exception here is a bug. Commands
    // write outputs atomically, so nothing half-written is left behind.
    std::fprintf(stderr, "internal error: unexpected exception: %s (please report it with the input)\n", e.what());
    return kExitInternal;
  }
  return inv.exit_code;
}

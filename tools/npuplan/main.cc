// npuplan: graph → verified multi-stream execution plan. See README.md.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <new>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "npuplan/support/echo.h"
#include "npuplan/support/str_util.h"
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

bool AddRegisteredCommand(CLI::App& app, Invocation& inv, std::string_view name) {
  auto it = Registry().find(std::string(name));
  if (it == Registry().end()) return false;
  it->second(app, inv);
  return true;
}

void KeepUntilExit(std::shared_ptr<const void> value) {
  static auto* const kept = new std::vector<std::shared_ptr<const void>>();  // never deleted
  kept->push_back(std::move(value));
}

void PrintError(std::string_view message) {
  // One line a person can trust: no control characters or NUL from the
  // input (a forged second "error:" line, a message cut short), bounded.
  const std::string line = StrCat("error: ", EchoMessage(message), "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

int ReportStatus(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  PrintError(std::string(status.message()));
  return kExitInvalid;
}

int ReportUsage(std::string_view message) {
  PrintError(message);
  return kExitUsage;
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
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return npuplan::StrCat("error: ", npuplan::EchoMessage(e.what()),
                           "\nRun with --help for more information.\n");
  });
  Invocation inv;
  // A first word that names a command builds that command's parser alone:
  // building every command's options (hundreds of CLI11 objects) only for
  // them to go unused was a visible share of a short run's start-up.
  // Anything else (--help, --version, no word) builds them all.
  const bool named = argc > 1 && argv[1][0] != '-';
  if (named) {
    // CLI11 reports an unknown first word only as "A subcommand is required": name it.
    if (!AddRegisteredCommand(app, inv, argv[1])) {
      std::string names;
      for (const auto& [name, setup] : Registry()) names += (names.empty() ? "" : ", ") + name;
      return ReportUsage(npuplan::StrCat("unknown command '", npuplan::EchoName(argv[1]),
                                         "' (commands: ", names, "; see --help)"));
    }
  } else {
    AddRegisteredCommands(app, inv);
  }
  // No command at all: show what there is (CLI11 alone says only "A
  // subcommand is required").
  if (argc <= 1) {
    std::fputs(app.help().c_str(), stdout);
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // --help and --version exit 0; every other parse error is a usage error.
    return rc == 0 ? 0 : kExitUsage;
  } catch (const std::bad_alloc&) {
    // The machine (or an address-space limit) has less memory than the input
    // needs: a resource error, not a bug. Outputs are transactions, so
    // nothing half-written is left behind.
    PrintError(
        "out of memory: the input needs more memory than this process may use (the reader limits, "
        "e.g. --max-nodes and --max-file-bytes, bound what an input may ask for)");
    return kExitInvalid;
  } catch (const std::exception& e) {
    // Library errors are Status values; an exception here is a bug.
    const std::string line =
        npuplan::StrCat("internal error: unexpected exception: ", npuplan::EchoMessage(e.what()),
                        " (please report it with the input)\n");
    std::fwrite(line.data(), 1, line.size(), stderr);
    return kExitInternal;
  }
  // Output that could not be written (a full disk, a closed pipe) is an
  // error, not a silent success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    if (inv.exit_code == kExitOk) {
      PrintError(npuplan::StrCat("cannot write standard output: ", std::strerror(errno)));
      return kExitInvalid;
    }
  }
  return inv.exit_code;
}

// Sub-command registry for the `npuplan` tool. Each cmd_<area>.cc file in this
// folder registers its sub-commands with NPUPLAN_REGISTER_COMMAND; main.cc adds
// them to the CLI11 app in name order, so no shared file needs editing when a
// new command lands. Flags are mapped into library option structs only here.
#ifndef NPUPLAN_TOOLS_NPUPLAN_COMMAND_H_
#define NPUPLAN_TOOLS_NPUPLAN_COMMAND_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"

namespace npuplan::cli {

// Exit codes shared by every command (documented in README.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;  // bad input, infeasible, verification failure
inline constexpr int kExitUsage = 2;    // usage error (CLI11 parse failure)
inline constexpr int kExitInternal = 70;  // an exception escaped a command: a bug (EX_SOFTWARE)

// State shared by the commands of one invocation.
struct Invocation {
  int exit_code = kExitOk;
};

// Adds a sub-command to `app`. The sub-command's callback stores its exit code
// in `inv.exit_code`.
using CommandSetup = std::function<void(CLI::App& app, Invocation& inv)>;

bool RegisterCommand(const std::string& name, CommandSetup setup);
void AddRegisteredCommands(CLI::App& app, Invocation& inv);
// Adds only the command registered as `name`; false when there is none.
bool AddRegisteredCommand(CLI::App& app, Invocation& inv, std::string_view name);

// Prints "error: <message>" to stderr — one line: control characters and NUL
// escaped, a very long message shortened (EchoMessage) — and returns
// kExitInvalid (or kExitOk for OK).
int ReportStatus(const absl::Status& status);
// The same line for a usage error; returns kExitUsage.
int ReportUsage(std::string_view message);

// Keeps `value` alive until the process exits and never destroys it: the
// operating system takes back a command's large result (a million-node plan:
// millions of small heap blocks) at once, where freeing it block by block
// costs a few hundred milliseconds after the work is done (the same choice as
// clang's -disable-free). Reachable from a static, so LeakSanitizer does not
// report it. Call it only once the value is no longer needed.
void KeepUntilExit(std::shared_ptr<const void> value);

}  // namespace npuplan::cli

#define NPUPLAN_CLI_CONCAT_INNER(a, b) a##b
#define NPUPLAN_CLI_CONCAT(a, b) NPUPLAN_CLI_CONCAT_INNER(a, b)
// NPUPLAN_REGISTER_COMMAND("kernel", SetupKernelCommand);
#define NPUPLAN_REGISTER_COMMAND(name, fn)                                  \
  static const bool NPUPLAN_CLI_CONCAT(npuplan_cmd_registered_, __LINE__) = \
      ::npuplan::cli::RegisterCommand(name, fn)

#endif  // NPUPLAN_TOOLS_NPUPLAN_COMMAND_H_

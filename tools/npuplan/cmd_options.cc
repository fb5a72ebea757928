// `npuplan options [--markdown]` lists every known option (the table that
// validates them); `npuplan passes` lists every pass --passes can name.
#include <cstdio>
#include <memory>

#include "npuplan/compiler/compiler.h"
#include "npuplan/pass/options.h"
#include "tools/npuplan/command.h"

namespace npuplan::cli {
namespace {

// Escapes '|' so a description stays in its Markdown table cell.
std::string EscapePipes(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

int RunOptions(bool markdown) {
  if (markdown) {
    std::printf("| option | default | meaning |\n|---|---|---|\n");
    for (const OptionSpec& s : KnownOptions()) {
      std::printf("| `%s` | %s | %s |\n", s.name.c_str(),
                  s.default_value.empty() ? "(unset)" : ("`" + s.default_value + "`").c_str(),
                  EscapePipes(s.description).c_str());
    }
  } else {
    for (const OptionSpec& s : KnownOptions()) {
      std::printf("%-40s %-10s %s\n", s.name.c_str(), s.default_value.empty() ? "-" : s.default_value.c_str(),
                  s.description.c_str());
    }
  }
  return kExitOk;
}

void SetupOptions(CLI::App& app, Invocation& inv) {
  auto markdown = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("options", "List every known option with its default and meaning");
  cmd->add_flag("--markdown", *markdown, "Print a Markdown table (docs/options.md)");
  cmd->callback([markdown, &inv] { inv.exit_code = RunOptions(*markdown); });
}

void SetupPasses(CLI::App& app, Invocation& inv) {
  CLI::App* cmd = app.add_subcommand("passes", "List every pass that --passes can name");
  cmd->callback([&inv] {
    for (const std::string& name : RegisteredPassNames()) std::printf("%s\n", name.c_str());
    inv.exit_code = kExitOk;
  });
}

NPUPLAN_REGISTER_COMMAND("options", SetupOptions);
NPUPLAN_REGISTER_COMMAND("passes", SetupPasses);

}  // namespace
}  // namespace npuplan::cli

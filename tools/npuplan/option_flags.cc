#include "tools/npuplan/option_flags.h"

#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "npuplan/pass/options.h"
#include "npuplan/support/echo.h"

namespace npuplan::cli {

void AddOptionFlag(CLI::App* cmd, std::vector<std::string>* values) {
  // A CLI11 check, so that `--option KEY` fails as a usage error (exit 2) like
  // any other malformed flag, before anything is read.
  CLI::Validator key_value(
      [](std::string& text) -> std::string {
        if (ParseOptionAssignment(text).ok()) return std::string();
        return "expected KEY=VALUE, got '" + EchoName(text) + "'";
      },
      "KEY=VALUE");
  cmd->add_option("--option", *values, "GE option KEY=VALUE (repeatable; overrides the graph's options)")
      ->check(key_value);
}

std::map<std::string, std::string> OptionOverrides(const std::vector<std::string>& values) {
  std::map<std::string, std::string> out;
  for (const std::string& v : values) {
    auto kv = ParseOptionAssignment(v);
    if (kv.ok()) out[kv->first] = kv->second;
  }
  return out;
}

void PrintWarnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings)
    std::fprintf(stderr, "warning: %s\n", EchoMessage(w).c_str());
}

}  // namespace npuplan::cli

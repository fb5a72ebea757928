// The `--option KEY=VALUE` flag shared by the commands that take GE options
// (compile, partition): a value without '=' is a usage error (exit 2) caught
// by CLI11 while parsing; warnings about options are printed as "warning: …".
#ifndef NPUPLAN_TOOLS_NPUPLAN_OPTION_FLAGS_H_
#define NPUPLAN_TOOLS_NPUPLAN_OPTION_FLAGS_H_

#include <map>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace npuplan::cli {

// Adds the repeatable `--option KEY=VALUE` flag of `cmd`, collected in `values`.
void AddOptionFlag(CLI::App* cmd, std::vector<std::string>* values);
// The flag's values as a map (later assignments of a key win). The CLI11
// check has already rejected values that are not KEY=VALUE.
std::map<std::string, std::string> OptionOverrides(const std::vector<std::string>& values);
// Prints each warning to stderr as "warning: <text>".
void PrintWarnings(const std::vector<std::string>& warnings);

}  // namespace npuplan::cli

#endif  // NPUPLAN_TOOLS_NPUPLAN_OPTION_FLAGS_H_

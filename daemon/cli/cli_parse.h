// SPDX-License-Identifier: GPL-2.0
// CLI11 configured for this tool: help that shows the true defaults of
// negatable flags, every value refused when empty or when it is the next
// option, and a failed parse told in one line naming the option as typed.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
class Error;
}  // namespace CLI

namespace cpuhp {

// Before adding subcommands (they inherit it): names a negatable flag
// `--health, --no-health`, not `--health,--no-health{false}`, which reads as
// a default of false.
void UseCliFormatter(CLI::App* app);

// After adding every option of `app` and its subcommands: a value may not be
// empty (`--cpus ""`), and an option's value may not look like an option
// (`--iterations -o e.json` would take -o as the count).
void CheckCliValues(CLI::App* app);

// What went wrong in `args` (argv without the program name) as one line,
// without a prefix: "--iterations needs a value (found the option -o)",
// "unknown option --iteration (did you mean --iterations?)", "--backend given
// twice", "-o: empty value".
std::string CliErrorLine(const CLI::App& app, const CLI::Error& e,
                         const std::vector<std::string>& args);

}  // namespace cpuhp

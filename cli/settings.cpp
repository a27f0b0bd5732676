// nimble settings: every NIMBLE_* variable libnimble.so reads, with its default, the values it
// accepts and what it does, from the one list (interposer/settings/settings.def).
#include <iostream>
#include <string>

#include "commands.hpp"
#include "settings/settings.hpp"

namespace nimble::cli {

void add_settings_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("settings", "List the NIMBLE_* environment variables libnimble.so reads");
  cmd->footer(
      "Each as NAME=DEFAULT (or NAME, unset by default), the values it accepts, and what it does.\n"
      "nimble record, bench and run set the ones their options name; set any other in the\n"
      "environment of the command. See docs/recording.md.");
  cmd->callback([] {
    for (const settings::Setting& s : settings::all) {
      std::cout << (*s.default_text ? settings::assignment(s) : std::string(s.variable));
      if (const std::string accepted = settings::accepted(s); !accepted.empty()) std::cout << "  (" << accepted << ")";
      std::cout << "\n    " << s.help << "\n";
    }
  });
}

}  // namespace nimble::cli

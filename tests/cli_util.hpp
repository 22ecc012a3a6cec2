// Options of a subcommand parsed from arguments the way main parses them (app/cli/flags.hpp): typed values, the
// project's one-line messages, unknown flags refused. The App lives as long as the options that point at it.
#pragma once
#include <CLI/CLI.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/flags.hpp"
#include "weights_tools/error.hpp"

namespace bs::test {

template <class Opts>
struct Parsed {
  CLI::App app{"batchscope"};
  Opts o;
};

// Throws UsageError, as main reports it ("<flag>: what was wrong"), for a mistake the command line reader catches.
template <class Opts, class... Add>
std::unique_ptr<Parsed<Opts>> parse_args(std::vector<std::string> args, Add... add) {
  auto p = std::make_unique<Parsed<Opts>>();
  p->app.allow_extras();
  p->app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  p->o.add_to(p->app, add...);
  std::reverse(args.begin(), args.end());
  try {
    p->app.parse(args);
  } catch (const CLI::ParseError& e) {
    throw UsageError(cli_error_text(e));
  }
  refuse_extras(p->app, "batchscope");
  return p;
}

}  // namespace bs::test

// Options of a subcommand parsed from arguments the way main parses them (app/cli/flags.hpp): typed values, the
// project's one-line messages, unknown flags refused. The App lives as long as the options that point at it. Also the
// run flags alone (app/cli/run_flags.hpp) and the skip for builds without the cuda menus, for the tests of menus,
// precisions and flags (test_tuning.cpp, test_run_flags.cpp).
#pragma once
#include <CLI/CLI.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/flags.hpp"
#include "app/cli/run_flags.hpp"
#include "kernels/plan/registry.hpp"
#include "test_util.hpp"
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

// The registry's cuda menus exist in builds with the cuda backend (CI's normal build compiles it; the sanitizer build
// has no CUDA and skips these, saying so).
#define SKIP_WITHOUT_CUDA_MENUS()                                                                  \
  do {                                                                                            \
    if (bs::registry().menu(bs::LayerKind::conv, bs::BackendKind::cuda).empty()) GTEST_SKIP() << "this build has no cuda backend"; \
  } while (0)

namespace bs::test {

// The run flags a command line gives (app/cli/run_flags.hpp), parsed as main parses them.
struct Flags {
  CLI::App app{"batchscope"};
  RunFlags f;
};
inline std::unique_ptr<Flags> flags(std::vector<std::string> args) {
  auto p = std::make_unique<Flags>();
  p->app.allow_extras();
  p->app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  p->f.add_to(p->app, {std::nullopt, true, true, HostMemory::pageable});
  std::reverse(args.begin(), args.end());
  try {
    p->app.parse(args);
  } catch (const CLI::ParseError& e) {
    throw UsageError(cli_error_text(e));
  }
  return p;
}
inline void expect_flag_error(std::vector<std::string> args, BackendKind b, const std::string& flag, const std::string& needle) {
  test::expect_error_at([&] { flags(args)->f.validate(b); }, flag, needle);
}

}  // namespace bs::test

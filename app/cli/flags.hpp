// How the commands read their flags: every value is parsed once, as the command line is read, into its typed target,
// with the project's own one-line messages ("--batch: must be at least 1, found 0"), never CLI11's or a library's raw
// text. Unknown flags name themselves and the nearest known one; required flags are checked after the unknown ones, so
// that a misspelled flag is reported as such rather than as the missing flag it was meant to be.
#pragma once
#include <CLI/CLI.hpp>
#include <climits>
#include <string>
#include <vector>

#include "kernels/plan/options.hpp"
#include "kernels/plan/registry.hpp"
#include "weights_tools/error.hpp"

namespace bs {

// An option taking one of E's spellings (kernels/plan/options.hpp), stored as E.
template <class E>
CLI::Option* add_enum(CLI::App& app, const std::string& name, E& target, const std::string& help) {
  const std::string flag = name.substr(0, name.find(','));
  return app
      .add_option_function<std::string>(
          name,
          [&target, flag](const std::string& v) {
            if (auto e = enum_from<E>(v)) target = *e;
            else throw CLI::ValidationError(flag, enum_error<E>(v));
          },
          help + " (default: " + name_of(target) + ")")
      ->type_name(enum_choices<E>("|"));
}

// Whole numbers in [min, max], with the project's messages.
CLI::Option* add_int(CLI::App& app, const std::string& name, int& target, const std::string& help, long long min = INT_MIN,
                     long long max = INT_MAX);
CLI::Option* add_u64(CLI::App& app, const std::string& name, uint64_t& target, const std::string& help);
CLI::Option* add_double(CLI::App& app, const std::string& name, double& target, const std::string& help, double min, double max);
// A comma-separated list of whole numbers, each at least `min`.
CLI::Option* add_int_list(CLI::App& app, const std::string& name, std::vector<int>& target, const std::string& help, int min = 1);
// A version of a cuda menu: a number, vN, a name, or auto (kernels/plan/registry.hpp).
CLI::Option* add_version(CLI::App& app, const std::string& name, int& target, LayerKind op, const std::string& help);
// "C,H,W" of positive whole numbers.
CLI::Option* add_chw(CLI::App& app, const std::string& name, std::array<int, 3>& target, const std::string& help);

// A string option restricted to `choices`: "unknown <what> 'x' (expected a, b or c)".
CLI::Validator one_of(const std::vector<std::string>& choices, const std::string& what);

// The default value shown in --help for options whose target type CLI11 cannot print.
std::string list_text(const std::vector<int>& v);

// After parsing: the first argument `cmd` did not take, as a usage error that names it and the nearest flag
// ("--output: unknown flag for batchscope sweep; did you mean --out?"). Needs cmd->allow_extras().
void refuse_extras(const CLI::App& cmd, const std::string& program);
// After refuse_extras: a flag the command needs.
void require(const CLI::App& cmd, const std::string& flag, const std::string& what);
// The nearest name among `known` (edit distance, at most a third of the word's length), or "".
std::string nearest(const std::string& word, const std::vector<std::string>& known);

// What batchscope's and batchscope-weights' command lines share: a flag given twice counts as the last one, the
// top-level flags may follow the command, --max-tensor-bytes, and a set of commands of which at most one runs.
class Commands {
 public:
  Commands(CLI::App& app, std::string program);
  // A command; its unknown flags are answered by refuse_extras, with the nearest known one.
  CLI::App* add(const char* name, const char* what);
  // After parsing: the command given (null for none; a stray word is refused), with its unknown flags refused and
  // --max-tensor-bytes applied.
  CLI::App* active() const;
  // The command called `name`, or null.
  CLI::App* find(const std::string& name) const;

 private:
  CLI::App& app_;
  std::string program_;
  std::string max_tensor_;
  std::vector<CLI::App*> commands_;
};

// Translates a CLI11 parse error into the project's one line ("<flag>: <what>"); used by main.
std::string cli_error_text(const CLI::Error& e);

}  // namespace bs

#include "app/cli/flags.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "weights_tools/limits.hpp"

namespace bs {
namespace {

std::string flag_of(const std::string& name) { return name.substr(0, name.find(',')); }

// A whole number, or why not.
bool parse_ll(const std::string& v, long long& out) {
  if (v.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(v.c_str(), &end, 10);
  return errno == 0 && end && *end == '\0';
}

std::string range_error(long long v, long long min, long long max) {
  if (v < min) return "must be at least " + std::to_string(min) + ", found " + std::to_string(v);
  return "must be at most " + std::to_string(max) + ", found " + std::to_string(v);
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string list_text(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

CLI::Option* add_int(CLI::App& app, const std::string& name, int& target, const std::string& help, long long min, long long max) {
  const std::string flag = flag_of(name);
  return app
      .add_option_function<std::string>(
          name,
          [&target, flag, min, max](const std::string& v) {
            long long x = 0;
            if (!parse_ll(v, x)) throw CLI::ValidationError(flag, "expected a whole number, found '" + v + "'");
            if (x < min || x > max) throw CLI::ValidationError(flag, range_error(x, min, max));
            target = static_cast<int>(x);
          },
          help)
      ->type_name("N");
}

CLI::Option* add_u64(CLI::App& app, const std::string& name, uint64_t& target, const std::string& help) {
  const std::string flag = flag_of(name);
  return app
      .add_option_function<std::string>(
          name,
          [&target, flag](const std::string& v) {
            char* end = nullptr;
            errno = 0;
            if (v.empty() || v[0] == '-' || v[0] == '+') throw CLI::ValidationError(flag, "expected a whole number of 0 or more, found '" + v + "'");
            const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
            if (errno != 0 || !end || *end != '\0') throw CLI::ValidationError(flag, "expected a whole number of 0 or more, found '" + v + "'");
            target = x;
          },
          help)
      ->type_name("N");
}

CLI::Option* add_double(CLI::App& app, const std::string& name, double& target, const std::string& help, double min, double max) {
  const std::string flag = flag_of(name);
  return app
      .add_option_function<std::string>(
          name,
          [&target, flag, min, max](const std::string& v) {
            char* end = nullptr;
            errno = 0;
            const double x = v.empty() ? 0.0 : std::strtod(v.c_str(), &end);
            if (v.empty() || errno != 0 || !end || *end != '\0' || x != x)
              throw CLI::ValidationError(flag, "expected a number, found '" + v + "'");
            if (x < min || x > max)
              throw CLI::ValidationError(flag, "must be between " + CLI::detail::to_string(min) + " and " + CLI::detail::to_string(max) +
                                                   ", found " + v);
            target = x;
          },
          help)
      ->type_name("X");
}

CLI::Option* add_int_list(CLI::App& app, const std::string& name, std::vector<int>& target, const std::string& help, int min) {
  const std::string flag = flag_of(name);
  return app
      .add_option_function<std::string>(
          name,
          [&target, flag, min](const std::string& v) {
            std::vector<int> out;
            size_t at = 0;
            while (true) {
              const size_t comma = v.find(',', at);
              const std::string item = v.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
              long long x = 0;
              if (!parse_ll(item, x))
                throw CLI::ValidationError(flag, "expected whole numbers separated by commas, found '" + v + "'");
              if (x < min || x > INT_MAX)
                throw CLI::ValidationError(flag, min == 1 ? "batch sizes must be positive, found " + std::to_string(x) : range_error(x, min, INT_MAX));
              out.push_back(static_cast<int>(x));
              if (comma == std::string::npos) break;
              at = comma + 1;
            }
            target = out;
          },
          help + " (default: " + list_text(target) + ")")
      ->type_name("N,N,...");
}

CLI::Option* add_version(CLI::App& app, const std::string& name, int& target, LayerKind op, const std::string& help) {
  const std::string flag = flag_of(name);
  return app
      .add_option_function<std::string>(
          name,
          [&target, flag, op](const std::string& v) {
            try {
              target = parse_version(op, v, flag);
            } catch (const Error& e) {
              const std::string m = e.what();
              throw CLI::ValidationError(flag, m.substr(m.find(": ") + 2));
            }
          },
          help)
      ->type_name("V");
}

CLI::Option* add_chw(CLI::App& app, const std::string& name, std::array<int, 3>& target, const std::string& help) {
  const std::string flag = flag_of(name);
  return app
      .add_option_function<std::string>(
          name,
          [&target, flag](const std::string& s) {
            std::array<int, 3> v{};
            char extra;
            if (std::sscanf(s.c_str(), "%d,%d,%d%c", &v[0], &v[1], &v[2], &extra) != 3 || v[0] < 1 || v[1] < 1 || v[2] < 1)
              throw CLI::ValidationError(flag, "expected C,H,W of positive integers, found '" + s + "'");
            target = v;
          },
          help)
      ->type_name("C,H,W");
}

CLI::Validator one_of(const std::vector<std::string>& choices, const std::string& what) {
  std::string list;
  for (size_t i = 0; i < choices.size(); ++i) list += (i ? (i + 1 == choices.size() ? " or " : ", ") : "") + choices[i];
  return CLI::Validator(
      [choices, what, list](std::string& v) -> std::string {
        if (std::find(choices.begin(), choices.end(), v) != choices.end()) return "";
        return "unknown " + what + " '" + v + "' (expected " + list + ")";
      },
      list, what);
}

std::string nearest(const std::string& word, const std::vector<std::string>& known) {
  std::string best;
  size_t best_d = 0;
  const std::string w = word.substr(0, word.find('='));
  for (const std::string& k : known) {
    size_t d = edit_distance(w, k);
    const bool prefix = std::min(w.size(), k.size()) >= 5 && (w.rfind(k, 0) == 0 || k.rfind(w, 0) == 0);
    if (prefix) d = std::min<size_t>(d, 1);
    if (d > std::max<size_t>(2, w.size() / 3) && !prefix) continue;
    if (best.empty() || d < best_d) {
      best = k;
      best_d = d;
    }
  }
  return best;
}

void refuse_extras(const CLI::App& cmd, const std::string& program) {
  std::vector<std::string> rest = cmd.remaining();
  if (const CLI::App* parent = cmd.get_parent()) {  // what fell through to the command line's top (fallthrough)
    const std::vector<std::string> up = parent->remaining();
    rest.insert(rest.end(), up.begin(), up.end());
  }
  if (rest.empty()) return;
  std::vector<std::string> known;
  for (const CLI::App* a = &cmd; a; a = a->get_parent())
    for (const CLI::Option* o : a->get_options())
      for (const std::string& n : o->get_lnames()) known.push_back("--" + n);
  const std::string where = program + (cmd.get_parent() ? " " + cmd.get_name() : std::string());
  for (const std::string& r : rest)
    if (r.size() > 1 && r[0] == '-' && !(r.size() > 1 && (std::isdigit(static_cast<unsigned char>(r[1])) || r[1] == '.'))) {
      const std::string flag = r.substr(0, r.find('='));
      const std::string near = nearest(flag, known);
      usage_fail(flag, "unknown flag for " + where + (near.empty() ? "; see " + where + " --help" : "; did you mean " + near + "?"));
    }
  usage_fail(rest[0], "unexpected argument for " + where + " (it takes no further arguments here; see " + where + " --help)");
}

void require(const CLI::App& cmd, const std::string& flag, const std::string& what) {
  if (cmd.count(flag) == 0) usage_fail(flag, "is required: " + what);
}

std::string cli_error_text(const CLI::Error& e) {
  std::string m = e.what();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {  // "--batch: 1 required N missing" and the like
    const size_t colon = m.find(':');
    return (colon == std::string::npos ? m : m.substr(0, colon)) + ": needs a value";
  }
  if (dynamic_cast<const CLI::ConversionError*>(&e) || dynamic_cast<const CLI::ValidationError*>(&e)) return m;
  return m;
}

Commands::Commands(CLI::App& app, std::string program) : app_(app), program_(std::move(program)) {
  app.require_subcommand(0, 1);
  app.allow_extras();
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--max-tensor-bytes", max_tensor_,
                 "largest tensor any input file may declare, e.g. 32G (default 16G, or $BATCHSCOPE_MAX_TENSOR_BYTES)");
  app.fallthrough();  // the option may follow the command
}

CLI::App* Commands::add(const char* name, const char* what) {
  CLI::App* c = app_.add_subcommand(name, what);
  c->allow_extras();
  commands_.push_back(c);
  return c;
}

CLI::App* Commands::active() const {
  CLI::App* given = nullptr;
  for (CLI::App* c : commands_)
    if (*c) given = c;
  if (!given) {
    if (!app_.remaining().empty()) refuse_extras(app_, program_);
    return nullptr;
  }
  refuse_extras(*given, program_);
  if (!max_tensor_.empty()) set_max_tensor_bytes(parse_byte_size(max_tensor_, "--max-tensor-bytes"));
  return given;
}

CLI::App* Commands::find(const std::string& name) const {
  for (CLI::App* c : commands_)
    if (c->get_name() == name) return c;
  return nullptr;
}

}  // namespace bs

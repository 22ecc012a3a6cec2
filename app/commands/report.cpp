#include "app/commands/report.hpp"
#include "app/exec/install_paths.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "weights_tools/error.hpp"

namespace bs {

void ReportOptions::add_to(CLI::App& app) {
  app.add_option("CSV", csvs, "sweep CSVs written by batchscope sweep (FILE.layers.csv and FILE.json beside each)")->required();
  app.add_option("--out", out, "folder for report.md, report.html and the figures (PNG and SVG)")->required();
  app.add_option("--batch", batch, "batch size for the variants-per-layer figure (default: largest common)");
  app.footer("Examples:\n  batchscope report experiments/results/latest/ece408-cpu.csv --out experiments/results/latest/report\n"
             "  batchscope report a.csv b.csv c.csv --out cmp --batch 256");
}

int run_report(const ReportOptions& o) {
  const std::string script = plots_dir() + "/report.py";
  if (!std::filesystem::exists(script))
    fail(script, "not found (install with cmake --install, or set BATCHSCOPE_SOURCE_DIR to the source tree)");
  for (const std::string& c : o.csvs)
    if (!std::filesystem::exists(c)) fail(c, "no such file");
  // Debian's python3 carries matplotlib (scripts/setup.sh); another python3 on PATH may not.
  const std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  std::vector<std::string> args = {python, script};
  args.insert(args.end(), o.csvs.begin(), o.csvs.end());
  args.push_back("--out");
  args.push_back(o.out);
  if (o.batch > 0) {
    args.push_back("--batch");
    args.push_back(std::to_string(o.batch));
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) fail("report", "cannot start " + python);
  if (pid == 0) {
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) fail("report", "cannot run " + python + " (install python3-matplotlib)");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace bs

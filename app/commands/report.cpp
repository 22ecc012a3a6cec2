#include "app/commands/report.hpp"
#include "app/exec/install_paths.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "app/cli/flags.hpp"
#include "app/results/results_io.hpp"
#include "weights_tools/error.hpp"

namespace bs {

void ReportOptions::add_to(CLI::App& app) {
  cmd = &app;
  app.add_option("CSV", csvs, "sweep or throughput CSVs written by batchscope (FILE.layers.csv and FILE.json beside each)");
  app.add_option("--out", out, "folder for report.md, report.html and the figures (PNG and SVG); made if missing")->type_name("DIR");
  add_int(app, "--batch", batch, "batch size for the variants-per-layer figure (default: largest common)", 1);
  app.footer("Examples:\n  batchscope report experiments/results/latest/ece408-cpu.csv --out experiments/results/latest/report\n"
             "  batchscope report a.csv b.csv c.csv --out cmp --batch 256");
}

int run_report(const ReportOptions& o) {
  if (o.csvs.empty()) usage_fail("CSV", "name at least one results CSV (batchscope sweep or throughput writes them)");
  require(*o.cmd, "--out", "the folder to write report.md, report.html and the figures into");
  check_writable_folder(o.out, "--out");
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
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;  // report.py printed its one line; 2 for a usage mistake
}

}  // namespace bs

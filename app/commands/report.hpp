// `batchscope report`: figures, a Markdown report and a self-contained HTML page from sweep CSVs, drawn by
// plots/report.py (Python 3 with matplotlib, installed by scripts/setup.sh).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace bs {

struct ReportOptions {
  std::vector<std::string> csvs;
  std::string out;
  int batch = 0;
  const CLI::App* cmd = nullptr;
  void add_to(CLI::App& app);
};

int run_report(const ReportOptions& o);

}  // namespace bs

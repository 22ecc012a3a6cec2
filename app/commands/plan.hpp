// `batchscope plan`: what a run would do, decided before anything runs (kernels/plan/plan.hpp): per layer the
// implementation and why, what it fuses, its layouts, workspace and prepared weights; the transfers, chunks, streams,
// graph capture and device memory. As a table, or as JSON with --json (the object each sweep point records).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "app/cli/run_flags.hpp"

namespace bs {

struct PlanOptions {
  std::string model_dir;
  int batch = 1;
  RunFlags run;
  bool json = false;
  const CLI::App* cmd = nullptr;
  void add_to(CLI::App& app);
};

int run_plan(const PlanOptions& o);

}  // namespace bs

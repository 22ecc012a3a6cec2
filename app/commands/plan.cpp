#include "app/commands/plan.hpp"

#include <iostream>

#include "app/cli/flags.hpp"
#include "app/exec/datasets.hpp"
#include "app/exec/executor.hpp"
#include "kernels/exec/device_info.hpp"

namespace bs {

void PlanOptions::add_to(CLI::App& app) {
  cmd = &app;
  app.add_option("--model", model_dir, "model folder (or its model.json, or a shipped model: ece408, alexnet)")->type_name("DIR");
  add_int(app, "--batch", batch, "images per forward pass (default: 1)", 1);
  run.add_to(app, {std::nullopt, true, true, HostMemory::pageable});
  app.add_flag("--json", json, "print the plan as JSON (the object each sweep point's JSON records under \"plans\")");
  app.footer("Nothing runs and nothing is allocated: the plan is what sweep, infer and throughput would run with the same flags.\n"
             "Examples:\n  batchscope plan --model ece408 --batch 10000\n"
             "  batchscope plan --model alexnet --backend cuda --batch 1024 --precision fp16 --transfers overlapped --json\n"
             "  batchscope plan --model alexnet --backend cpu --batch 16");
}

int run_plan(const PlanOptions& o) {
  require(*o.cmd, "--model", "the model folder, its model.json, or a shipped model (ece408, alexnet)");
  const BackendKind kind = o.run.resolve_backend();
  o.run.validate(kind);
  const Model m = load_model_arg(o.model_dir);
  if (is_gpu(kind)) init_gpu();
  const Executor ex(m, kind, o.run.options(kind));
  const Plan p = ex.plan(o.batch);
  if (o.json) std::cout << plan_json(p, m).dump(2) << "\n";
  else std::cout << plan_table(p, m);
  return 0;
}

}  // namespace bs

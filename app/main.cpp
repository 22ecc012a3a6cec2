// batchscope: batch inference of convolutional networks on the CPU and GPU, and where the time goes.
#include <CLI/CLI.hpp>
#include <iostream>

#include "app/commands/classify.hpp"
#include "app/commands/infer.hpp"
#include "app/commands/report.hpp"
#include "app/commands/sweep.hpp"
#include "app/commands/throughput.hpp"
#include "app/commands/tune.hpp"
#include "app/commands/variants.hpp"
#include "app/exec/world.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/limits.hpp"

namespace {

// Under mpirun every rank runs main; one line of error, from rank 0, is enough.
int report_error(bs::World& world, const std::string& line, int code) {
  if (world.root()) std::cerr << line << "\n";
  world.finalize();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  bs::World* world = nullptr;
  try {
    world = &bs::World::init(&argc, &argv);
  } catch (const bs::Error& e) {
    return report_error(bs::World::get(), "batchscope: error: " + std::string(e.what()), 1);
  }
  CLI::App app{"batchscope: batch inference of CNNs on CPU and GPU, with an execution-time breakdown"};
  app.require_subcommand(1);
  std::string max_tensor;
  app.add_option("--max-tensor-bytes", max_tensor,
                 "largest tensor any input file may declare, e.g. 32G (default 16G, or $BATCHSCOPE_MAX_TENSOR_BYTES)");
  app.fallthrough();  // the option may follow the subcommand
  app.failure_message([](const CLI::App*, const CLI::Error& e) { return "batchscope: error: " + std::string(e.what()) + "\n"; });

  bs::InferOptions infer;
  CLI::App* infer_cmd = app.add_subcommand("infer", "run a model over a test set or a .npy tensor");
  infer.add_to(*infer_cmd);

  bs::SweepOptions sweep, profile;
  CLI::App* sweep_cmd = app.add_subcommand("sweep", "batch sweep with the execution-time breakdown (CSV + JSON)");
  sweep.add_to(*sweep_cmd, false);
  CLI::App* profile_cmd = app.add_subcommand("profile", "nvprof-style tables for one batch size");
  profile.add_to(*profile_cmd, true);

  bs::ClassifyOptions classify;
  CLI::App* classify_cmd = app.add_subcommand("classify", "top-5 ImageNet classes of photos (OpenCV preprocessing)");
  classify.add_to(*classify_cmd);

  bs::ReportOptions report;
  CLI::App* report_cmd = app.add_subcommand("report", "figures and a Markdown + HTML report from sweep CSVs");
  report.add_to(*report_cmd);

  bs::ThroughputOptions throughput;
  CLI::App* throughput_cmd = app.add_subcommand("throughput", "stream N images through in batches (offline scenario): "
                                                              "images/s and the latency distribution per batch size");
  throughput.add_to(*throughput_cmd);

  bs::TuneOptions tune;
  CLI::App* tune_cmd = app.add_subcommand("tune", "time every conv and fc version per layer and batch size; write the table auto reads");
  tune.add_to(*tune_cmd);

  CLI::App* variants_cmd = app.add_subcommand("variants", "list every kernel menu (conv, fc, cuDNN policies, precisions)");
  variants_cmd->footer("Example:\n  batchscope variants");

  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  sweep.command_line = profile.command_line = tune.command_line = throughput.command_line = command_line;

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (!world->root()) {  // rank 0 prints the help or the error
      world->finalize();
      return e.get_exit_code();
    }
    const int code = app.exit(e);
    world->finalize();
    return code;
  }
  int rc = 0;
  try {
    if (world->parallel() && !*infer_cmd && !*sweep_cmd && !*throughput_cmd)
      bs::fail("mpirun", std::string(app.get_subcommands().front()->get_name()) +
                             " runs as one process; under mpirun only infer, sweep and throughput run (one rank per GPU)");
    if (!max_tensor.empty()) bs::set_max_tensor_bytes(bs::parse_byte_size(max_tensor, "--max-tensor-bytes"));
    if (*infer_cmd) rc = bs::run_infer(infer);
    if (*sweep_cmd) rc = bs::run_sweep(sweep);
    if (*throughput_cmd) rc = bs::run_throughput(throughput);
    if (*profile_cmd) rc = bs::run_profile(profile);
    if (*classify_cmd) rc = bs::run_classify(classify);
    if (*report_cmd) rc = bs::run_report(report);
    if (*tune_cmd) rc = bs::run_tune(tune);
    if (*variants_cmd) rc = bs::run_variants();
  } catch (const bs::RankFailure& e) {  // every rank agreed that one failed; the message names it
    return report_error(*world, "batchscope: error: " + std::string(e.what()), 1);
  } catch (const bs::Error& e) {
    return report_error(*world, "batchscope: error: " + std::string(e.what()), 1);
  } catch (const std::exception& e) {
    return report_error(*world, "batchscope: internal error: " + std::string(e.what()), 2);
  }
  world->finalize();
  return rc;
}

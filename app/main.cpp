// batchscope: batch inference of convolutional networks on the CPU and GPU, and where the time goes.
#include <CLI/CLI.hpp>
#include <iostream>

#include "app/classify.hpp"
#include "app/infer.hpp"
#include "app/report.hpp"
#include "app/sweep.hpp"
#include "app/tune.hpp"
#include "app/variants.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/limits.hpp"

int main(int argc, char** argv) {
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

  bs::TuneOptions tune;
  CLI::App* tune_cmd = app.add_subcommand("tune", "time every conv and fc version per layer and batch size; write the table auto reads");
  tune.add_to(*tune_cmd);

  CLI::App* variants_cmd = app.add_subcommand("variants", "list every kernel menu (conv, fc, cuDNN policies, precisions)");
  variants_cmd->footer("Example:\n  batchscope variants");

  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  sweep.command_line = profile.command_line = tune.command_line = command_line;

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (!max_tensor.empty()) bs::set_max_tensor_bytes(bs::parse_byte_size(max_tensor, "--max-tensor-bytes"));
    if (*infer_cmd) return bs::run_infer(infer);
    if (*sweep_cmd) return bs::run_sweep(sweep);
    if (*profile_cmd) return bs::run_profile(profile);
    if (*classify_cmd) return bs::run_classify(classify);
    if (*report_cmd) return bs::run_report(report);
    if (*tune_cmd) return bs::run_tune(tune);
    if (*variants_cmd) return bs::run_variants();
  } catch (const bs::Error& e) {
    std::cerr << "batchscope: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "batchscope: internal error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

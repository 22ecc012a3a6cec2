// batchscope: batch inference of convolutional networks on the CPU and GPU, and where the time goes.
// Every mistake on the command line is one line, "batchscope: error: <flag or file>: what was wrong[; what to do]", on
// stderr, with exit status 2; every other failure one such line with status 1 (130 after an interruption that wrote
// what was measured).
#include <CLI/CLI.hpp>
#include <iostream>

#include "app/build_info.hpp"
#include "app/cli/flags.hpp"
#include "app/commands/classify.hpp"
#include "app/commands/infer.hpp"
#include "app/commands/plan.hpp"
#include "app/commands/report.hpp"
#include "app/commands/sweep.hpp"
#include "app/commands/throughput.hpp"
#include "app/commands/tune.hpp"
#include "app/commands/variants.hpp"
#include "app/exec/interrupt.hpp"
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
  bs::install_interrupt_handlers();
  CLI::App app{"batchscope: batch inference of CNNs on CPU and GPU, with an execution-time breakdown"};
  bs::Commands commands(app, "batchscope");
  app.set_version_flag("--version", bs::version_text());
  app.footer("Run 'batchscope COMMAND --help' for a command's flags and examples. Shipped models (ece408, alexnet) resolve "
             "by name from any directory.\nExamples:\n  batchscope infer --model ece408\n"
             "  batchscope sweep --model ece408 --batches 1,16,256 --out ece408.csv && batchscope report ece408.csv --out report\n"
             "  batchscope plan --model alexnet --batch 1024 --backend cuda --precision fp16");

  auto command = [&](const char* name, const char* what) { return commands.add(name, what); };
  bs::InferOptions infer;
  CLI::App* infer_cmd = command("infer", "run a model over a test set or a .npy tensor");
  infer.add_to(*infer_cmd);
  bs::SweepOptions sweep, profile;
  CLI::App* sweep_cmd = command("sweep", "batch sweep with the execution-time breakdown (CSV + JSON)");
  sweep.add_to(*sweep_cmd, false);
  CLI::App* profile_cmd = command("profile", "nvprof-style tables for one batch size");
  profile.add_to(*profile_cmd, true);
  bs::PlanOptions plan;
  CLI::App* plan_cmd = command("plan", "print what a run would do: per layer the implementation and why, memory, transfers");
  plan.add_to(*plan_cmd);
  bs::ClassifyOptions classify;
  CLI::App* classify_cmd = command("classify", "top-5 ImageNet classes of photos (OpenCV preprocessing)");
  classify.add_to(*classify_cmd);
  bs::ReportOptions report;
  CLI::App* report_cmd = command("report", "figures and a Markdown + HTML report from sweep CSVs");
  report.add_to(*report_cmd);
  bs::ThroughputOptions throughput;
  CLI::App* throughput_cmd = command("throughput", "stream N images through in batches (offline scenario): images/s and the "
                                                   "latency distribution per batch size");
  throughput.add_to(*throughput_cmd);
  bs::TuneOptions tune;
  CLI::App* tune_cmd = command("tune", "time every conv and fc version per layer and batch size; write the table auto reads");
  tune.add_to(*tune_cmd);
  CLI::App* variants_cmd = command("variants", "list every implementation (conv and fc menus, cuDNN policies, CPU paths, precisions)");
  variants_cmd->footer("Example:\n  batchscope variants");
  std::string help_topic;
  CLI::App* help_cmd = command("help", "this text, or a command's flags (batchscope help sweep)");
  help_cmd->add_option("COMMAND", help_topic, "the command to explain");

  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  sweep.command_line = profile.command_line = tune.command_line = throughput.command_line = command_line;

  auto usage_error = [&](const std::string& line) { return report_error(*world, "batchscope: error: " + line, 2); };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    const int code = world->root() ? app.exit(e) : 0;
    world->finalize();
    return code;
  } catch (const CLI::CallForVersion& e) {
    if (world->root()) std::cout << bs::version_text();
    world->finalize();
    return 0;
  } catch (const CLI::ParseError& e) {
    return usage_error(bs::cli_error_text(e));
  }
  int rc = 0;
  try {
    CLI::App* active = commands.active();
    if (!active) {  // `batchscope` alone: what it does and how to ask
      if (world->root()) std::cout << app.help();
      world->finalize();
      return 2;
    }
    if (active == help_cmd) {
      CLI::App* topic = commands.find(help_topic);
      if (!help_topic.empty() && !topic) bs::usage_fail("help", "no command '" + help_topic + "'; see batchscope help");
      // (App::help() of the top would describe the selected command, help itself.)
      if (world->root()) std::cout << (topic ? topic->help("batchscope") : app.get_formatter()->make_help(&app, "batchscope", CLI::AppFormatMode::Normal));
      world->finalize();
      return 0;
    }
    if (world->parallel() && active != infer_cmd && active != sweep_cmd && active != throughput_cmd)
      bs::usage_fail("mpirun", active->get_name() + " runs as one process; under mpirun only infer, sweep and throughput run (one rank per GPU)");
    if (active == infer_cmd) rc = bs::run_infer(infer);
    if (active == sweep_cmd) rc = bs::run_sweep(sweep);
    if (active == throughput_cmd) rc = bs::run_throughput(throughput);
    if (active == profile_cmd) rc = bs::run_profile(profile);
    if (active == plan_cmd) rc = bs::run_plan(plan);
    if (active == classify_cmd) rc = bs::run_classify(classify);
    if (active == report_cmd) rc = bs::run_report(report);
    if (active == tune_cmd) rc = bs::run_tune(tune);
    if (active == variants_cmd) rc = bs::run_variants();
  } catch (const bs::RankFailure& e) {  // every rank agreed that one failed; the message names it
    return report_error(*world, "batchscope: error: " + std::string(e.what()), e.usage ? 2 : 1);
  } catch (const bs::UsageError& e) {
    return usage_error(e.what());
  } catch (const bs::Error& e) {
    return report_error(*world, "batchscope: error: " + std::string(e.what()), 1);
  } catch (const std::exception& e) {
    return report_error(*world, "batchscope: internal error: " + std::string(e.what()), 1);
  }
  world->finalize();
  return rc;
}

// batchscope: batch inference of convolutional networks on the CPU and GPU, and where the time goes.
#include <CLI/CLI.hpp>
#include <iostream>

#include "app/infer.hpp"
#include "weights_tools/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"batchscope: batch inference of CNNs on CPU and GPU, with an execution-time breakdown"};
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) { return "batchscope: error: " + std::string(e.what()) + "\n"; });

  bs::InferOptions infer;
  CLI::App* infer_cmd = app.add_subcommand("infer", "run a model over a test set or a .npy tensor");
  infer.add_to(*infer_cmd);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (*infer_cmd) return bs::run_infer(infer);
  } catch (const bs::Error& e) {
    std::cerr << "batchscope: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "batchscope: internal error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

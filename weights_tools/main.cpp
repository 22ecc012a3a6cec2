// batchscope-weights: inspect weight files and convert other frameworks' weights into model folders.
#include <CLI/CLI.hpp>
#include <iostream>

#include "kernels/model.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/inspect.hpp"
#include "weights_tools/mxnet_import.hpp"

namespace {

std::array<int, 3> parse_shape(const std::string& s) {
  std::array<int, 3> v{};
  char extra;
  if (std::sscanf(s.c_str(), "%d,%d,%d%c", &v[0], &v[1], &v[2], &extra) != 3 || v[0] < 1 || v[1] < 1 || v[2] < 1)
    bs::fail("--input-shape", "expected C,H,W of positive integers, found '" + s + "'");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"batchscope-weights: inspect .npy/.npz/.params files and import MXNet models into model folders"};
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "batchscope-weights: error: " + std::string(e.what()) + "\n";
  });
  app.footer(
      "Examples:\n"
      "  batchscope-weights inspect data/models/ece408/new0_weight.npy data/ece408-2019sp/ece408-0002.params\n"
      "  batchscope-weights import-mxnet --symbol data/ece408-2019sp/ece408-symbol.json \\\n"
      "      --params data/ece408-2019sp/ece408-0002.params --input-shape 1,48,48 --out data/models/ece408");

  std::vector<std::string> files;
  CLI::App* inspect = app.add_subcommand("inspect", "print name, shape, dtype, min, max and mean of each tensor");
  inspect->add_option("FILE", files, ".npy, .npz or .params files")->required();

  bs::MxnetImportOptions mx;
  std::string shape;
  CLI::App* imp = app.add_subcommand("import-mxnet", "turn an MXNet symbol graph and .params into a model folder");
  imp->add_option("--symbol", mx.symbol_path, "MXNet -symbol.json")->required();
  imp->add_option("--params", mx.params_path, "MXNet .params (NDArray list)")->required();
  imp->add_option("--input-shape", shape, "input C,H,W, e.g. 1,48,48")->required();
  imp->add_option("--out", mx.out_dir, "model folder to write (replaced if it is a model folder)")->required();
  imp->add_option("--name", mx.name, "model name (default: the symbol file's name without -symbol)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (*inspect) {
      for (const auto& f : files) bs::inspect_file(f, std::cout);
    } else if (*imp) {
      mx.input_shape = parse_shape(shape);
      bs::ModelFolder folder = bs::convert_mxnet(mx);
      bs::write_model_folder(mx.out_dir, folder, [](const std::string& dir) { bs::load_model(dir); });
      std::cout << "wrote " << mx.out_dir << "/model.json and " << folder.tensors.size() << " tensors\n";
    }
  } catch (const bs::Error& e) {
    std::cerr << "batchscope-weights: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "batchscope-weights: internal error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

// batchscope-weights: inspect weight files and convert other frameworks' weights into model folders.
#include <CLI/CLI.hpp>
#include <iostream>

#include "kernels/model/model.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/limits.hpp"
#include "weights_tools/inspect.hpp"
#include "weights_tools/bvlc.hpp"
#include "weights_tools/mxnet_import.hpp"
#include "weights_tools/rearrange.hpp"

namespace {

std::array<int, 3> parse_shape(const std::string& s, const std::string& flag = "--input-shape") {
  std::array<int, 3> v{};
  char extra;
  if (std::sscanf(s.c_str(), "%d,%d,%d%c", &v[0], &v[1], &v[2], &extra) != 3 || v[0] < 1 || v[1] < 1 || v[2] < 1)
    bs::fail(flag, "expected C,H,W of positive integers, found '" + s + "'");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"batchscope-weights: inspect .npy/.npz/.params files and import MXNet models into model folders"};
  app.require_subcommand(1);
  std::string max_tensor;
  app.add_option("--max-tensor-bytes", max_tensor,
                 "largest tensor any input file may declare, e.g. 32G (default 16G, or $BATCHSCOPE_MAX_TENSOR_BYTES)");
  app.fallthrough();  // the option may follow the subcommand
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "batchscope-weights: error: " + std::string(e.what()) + "\n";
  });
  app.footer(
      "Examples:\n"
      "  batchscope-weights inspect data/models/ece408/new0_weight.npy data/ece408-2019sp/ece408-0002.params\n"
      "  batchscope-weights import-mxnet --symbol data/ece408-2019sp/ece408-symbol.json \\\n"
      "      --params data/ece408-2019sp/ece408-0002.params --input-shape 1,48,48 --out data/models/ece408\n"
      "  batchscope-weights synthesize --model alexnet --seed 1 --out /tmp/alexnet-synthetic.npy\n"
      "  batchscope-weights import-bvlc bvlc_alexnet.npy --out data/models/alexnet\n"
      "  batchscope-weights rearrange conv1_W.npy --from HWIO --to OIHW --out conv1_oihw.npy");

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

  bs::BvlcImportOptions bv;
  CLI::App* ibv = app.add_subcommand("import-bvlc", "turn bvlc_alexnet.npy (pickled dict, TensorFlow layouts) into a model folder");
  ibv->add_option("FILE", bv.path, "bvlc_alexnet.npy (or a file from 'synthesize')")->required();
  ibv->add_option("--out", bv.out_dir, "model folder to write (replaced if it is a model folder)")->required();
  ibv->add_option("--fc6-flatten", bv.fc6_flatten, "order of fc6's inputs in the file: hwc (TensorFlow, reported for this file) | chw")
      ->capture_default_str();
  ibv->add_option("--conv1-padding", bv.conv1_padding, "valid (Caffe deploy, 55x55) | same (TensorFlow 'SAME', 57x57)")
      ->capture_default_str();
  ibv->add_option("--lrn-alpha", bv.lrn_alpha, "LRN alpha")->capture_default_str();
  ibv->add_option("--lrn-convention", bv.lrn_convention, "caffe (alpha is divided by local_size) | tensorflow (it is not)")
      ->capture_default_str();
  ibv->add_option("--input-size", bv.input_size, "input height and width")->capture_default_str();
  ibv->add_option("--name", bv.name, "model name")->capture_default_str();

  bs::RearrangeOptions ra;
  std::string chw;
  CLI::App* rar = app.add_subcommand("rearrange", "rearrange one .npy weight between layouts (each with its inverse)");
  rar->add_option("FILE", ra.in, "input .npy")->required();
  rar->add_option("--from", ra.from, "HWIO | OIHW | IO | OI | fc-hwc | fc-chw")->required();
  rar->add_option("--to", ra.to, "OIHW | HWIO | OI | IO | fc-chw | fc-hwc")->required();
  rar->add_option("--groups", ra.groups, "convolution groups (checked against the filter count)")->check(CLI::PositiveNumber);
  rar->add_option("--input-chw", chw, "fc-hwc/fc-chw: C,H,W of the flattened feature map, e.g. 256,6,6");
  rar->add_option("--out", ra.out, "output .npy")->required();

  std::string synth_model = "alexnet", synth_out;
  uint64_t seed = 1;
  CLI::App* syn = app.add_subcommand("synthesize", "write deterministic He-initialised weights in the bvlc_alexnet.npy format");
  syn->add_option("--model", synth_model, "alexnet (the only one)")->capture_default_str();
  syn->add_option("--seed", seed, "random seed")->capture_default_str();
  syn->add_option("--out", synth_out, "output .npy")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (!max_tensor.empty()) bs::set_max_tensor_bytes(bs::parse_byte_size(max_tensor, "--max-tensor-bytes"));
    if (*inspect) {
      for (const auto& f : files) bs::inspect_file(f, std::cout);
    } else if (*imp) {
      mx.input_shape = parse_shape(shape);
      bs::ModelFolder folder = bs::convert_mxnet(mx);
      bs::write_model_folder(mx.out_dir, folder, [](const std::string& dir) { bs::load_model(dir); });
      std::cout << "wrote " << mx.out_dir << "/model.json and " << folder.tensors.size() << " tensors\n";
    } else if (*ibv) {
      bs::ModelFolder folder = bs::convert_bvlc(bv);
      bs::write_model_folder(bv.out_dir, folder, [](const std::string& dir) { bs::load_model(dir); });
      std::cout << "wrote " << bv.out_dir << "/model.json and " << folder.tensors.size() << " tensors ("
                << folder.model["weights"].get<std::string>() << " weights)\n";
    } else if (*rar) {
      if (!chw.empty()) ra.chw = parse_shape(chw, "--input-chw");
      bs::rearrange_file(ra);
      std::cout << "wrote " << ra.out << " (" << ra.from << " -> " << ra.to << ")\n";
    } else if (*syn) {
      if (synth_model != "alexnet") bs::fail("--model", "only alexnet can be synthesized, found '" + synth_model + "'");
      bs::write_bvlc(synth_out, bs::synthesize_alexnet(seed));
      std::cout << "wrote " << synth_out << " (synthetic AlexNet weights, seed " << seed << ", bvlc_alexnet.npy format)\n";
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

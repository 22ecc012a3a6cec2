// batchscope-weights: inspect weight files and convert other frameworks' weights into model folders. Every mistake on
// the command line is one line "batchscope-weights: error: <flag or file>: ..." with exit status 2; a file that cannot
// be read or written, one such line with status 1.
#include <CLI/CLI.hpp>
#include <iostream>

#include "app/cli/flags.hpp"
#include "kernels/model/model.hpp"
#include "weights_tools/bvlc.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/inspect.hpp"
#include "weights_tools/limits.hpp"
#include "weights_tools/mxnet_import.hpp"
#include "weights_tools/onnx/onnx_import.hpp"
#include "weights_tools/rearrange.hpp"
#include "weights_tools/zoo/zoo.hpp"

namespace {

int error_line(const std::string& what, int code) {
  std::cerr << "batchscope-weights: error: " << what << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"batchscope-weights: inspect .npy/.npz/.params files and import MXNet models into model folders"};
  bs::Commands commands(app, "batchscope-weights");
  app.footer(
      "Examples:\n"
      "  batchscope-weights inspect data/models/ece408/new0_weight.npy data/ece408-2019sp/ece408-0002.params\n"
      "  batchscope-weights import-mxnet --symbol data/ece408-2019sp/ece408-symbol.json \\\n"
      "      --params data/ece408-2019sp/ece408-0002.params --input-shape 1,48,48 --out data/models/ece408\n"
      "  batchscope-weights synthesize --model alexnet --seed 1 --out /tmp/alexnet-synthetic.npy\n"
      "  batchscope-weights import-bvlc bvlc_alexnet.npy --out data/models/alexnet\n"
      "  batchscope-weights rearrange conv1_W.npy --from HWIO --to OIHW --out conv1_oihw.npy");
  auto command = [&](const char* name, const char* what) { return commands.add(name, what); };

  std::vector<std::string> files;
  CLI::App* inspect = command("inspect", "print name, shape, dtype, min, max and mean of each tensor (.npy, .npz, .params, and "
                                         "the arrays inside a pickled bvlc_alexnet.npy)");
  inspect->add_option("FILE", files, ".npy, .npz or .params files");

  bs::MxnetImportOptions mx;
  CLI::App* imp = command("import-mxnet", "turn an MXNet symbol graph and .params into a model folder");
  imp->add_option("--symbol", mx.symbol_path, "MXNet -symbol.json")->type_name("FILE");
  imp->add_option("--params", mx.params_path, "MXNet .params (NDArray list)")->type_name("FILE");
  bs::add_chw(*imp, "--input-shape", mx.input_shape, "input C,H,W, e.g. 1,48,48");
  imp->add_option("--out", mx.out_dir, "model folder to write (replaced if it is a model folder)")->type_name("DIR");
  imp->add_option("--name", mx.name, "model name (default: the symbol file's name without -symbol)");

  bs::BvlcImportOptions bv;
  CLI::App* ibv = command("import-bvlc", "turn bvlc_alexnet.npy (pickled dict, TensorFlow layouts) into a model folder");
  ibv->add_option("FILE", bv.path, "bvlc_alexnet.npy (or a file from 'synthesize')");
  ibv->add_option("--out", bv.out_dir, "model folder to write (replaced if it is a model folder)")->type_name("DIR");
  // Each convention is a choice of two, read once into a flag of the options (bvlc.hpp).
  auto choice = [&](const std::string& flag, const std::string& what, const std::string& yes, const std::string& no, bool& target,
                    const std::string& help) {
    ibv->add_option_function<std::string>(flag, [&target, yes](const std::string& v) { target = v == yes; }, help)
        ->check(bs::one_of({yes, no}, what))
        ->type_name(yes + "|" + no);
  };
  choice("--fc6-flatten", "flatten order", "hwc", "chw", bv.fc6_hwc,
         "order of fc6's inputs in the file: hwc (TensorFlow, reported for this file; the default) | chw");
  choice("--conv1-padding", "padding", "same", "valid", bv.conv1_same, "valid (Caffe deploy, 55x55; the default) | same (TensorFlow 'SAME', 57x57)");
  bs::add_double(*ibv, "--lrn-alpha", bv.lrn_alpha, "LRN alpha (default: 0.0001)", 0, 1e9);
  choice("--lrn-convention", "convention", "caffe", "tensorflow", bv.lrn_caffe,
         "caffe (alpha is divided by local_size; the default) | tensorflow (it is not)");
  bs::add_int(*ibv, "--input-size", bv.input_size, "input height and width (default: 227)", 1, 65535);
  ibv->add_option("--name", bv.name, "model name")->capture_default_str();

  bs::OnnxImportOptions ox;
  CLI::App* ionnx = command("import-onnx", "turn an ONNX model (a chain of layers) into a model folder");
  ionnx->add_option("FILE", ox.model_path, "the .onnx file (its external data beside it)");
  ionnx->add_option("--out", ox.out_dir, "model folder to write (replaced if it is a model folder)")->type_name("DIR");
  bs::add_chw(*ionnx, "--input-shape", ox.input_shape, "C,H,W of one image, where the file leaves them symbolic (e.g. 3,224,224)");
  ionnx->add_option("--name", ox.name, "model name (default: the graph's name, else the file's)");
  ionnx->footer("Example:\n  batchscope-weights import-onnx alexnet.onnx --out models/alexnet-onnx\n"
                "Runs chains of Conv, BatchNormalization (folded into the layer before, else a 1x1 depthwise convolution), Relu, LeakyRelu, Tanh, Sigmoid, MaxPool, "
                "AveragePool, GlobalAveragePool, GlobalMaxPool, LRN, Flatten, Reshape, Gemm, MatMul + Add, Dropout, "
                "Identity and Softmax.");

  bs::RearrangeOptions ra;
  CLI::App* rar = command("rearrange", "rearrange one .npy weight between layouts (each with its inverse)");
  rar->add_option("FILE", ra.in, "input .npy");
  const std::vector<std::string> layouts = {"HWIO", "OIHW", "IO", "OI", "fc-hwc", "fc-chw"};
  rar->add_option("--from", ra.from, "HWIO | OIHW | IO | OI | fc-hwc | fc-chw")->check(bs::one_of(layouts, "layout"));
  rar->add_option("--to", ra.to, "OIHW | HWIO | OI | IO | fc-chw | fc-hwc")->check(bs::one_of(layouts, "layout"));
  bs::add_int(*rar, "--groups", ra.groups, "convolution groups (checked against the filter count)", 1, 1 << 24);
  bs::add_chw(*rar, "--input-chw", ra.chw, "fc-hwc/fc-chw: C,H,W of the flattened feature map, e.g. 256,6,6");
  rar->add_option("--out", ra.out, "output .npy")->type_name("FILE");

  std::string synth_model = "alexnet", synth_out;
  uint64_t seed = 1;
  CLI::App* syn = command("synthesize", "write a zoo network as a model folder with seeded He-initialised weights");
  syn->add_option("--model", synth_model, bs::zoo_names())->capture_default_str();
  bs::add_u64(*syn, "--seed", seed, "random seed, 0 or more (default: 1)");
  syn->add_option("--out", synth_out, "model folder to write (alexnet to a FILE.npy: the bvlc_alexnet.npy format, for "
                                      "import-bvlc)")->type_name("DIR");
  {
    std::string zoo_list = "Networks:\n";
    for (const bs::ZooEntry& e : bs::zoo()) zoo_list += "  " + std::string(e.name) + std::string(22 - std::string(e.name).size(), ' ') + e.source + "\n";
    syn->footer(zoo_list + "Examples:\n  batchscope-weights synthesize --model vgg16 --out models/vgg16\n"
                "  batchscope-weights synthesize --model alexnet --seed 1 --out /tmp/alexnet-synthetic.npy");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return error_line(bs::cli_error_text(e), 2);
  }
  try {
    CLI::App* active = commands.active();
    if (!active) {
      std::cout << app.help();
      return 2;
    }
    if (active == inspect) {
      if (files.empty()) bs::usage_fail("FILE", "name at least one .npy, .npz or .params file to inspect");
      for (const auto& f : files) bs::inspect_file(f, std::cout);
    } else if (active == imp) {
      bs::require(*imp, "--symbol", "the MXNet -symbol.json");
      bs::require(*imp, "--params", "the MXNet .params file");
      bs::require(*imp, "--input-shape", "the input's C,H,W, e.g. 1,48,48");
      bs::require(*imp, "--out", "the model folder to write");
      bs::ModelFolder folder = bs::convert_mxnet(mx);
      bs::write_model_folder(mx.out_dir, folder, [](const std::string& dir) { bs::load_model(dir); });
      std::cout << "wrote " << mx.out_dir << "/model.json and " << folder.tensors.size() << " tensors\n";
    } else if (active == ibv) {
      if (bv.path.empty()) bs::usage_fail("FILE", "name the bvlc_alexnet.npy to import (or a file from 'synthesize')");
      bs::require(*ibv, "--out", "the model folder to write");
      bs::ModelFolder folder = bs::convert_bvlc(bv);
      bs::write_model_folder(bv.out_dir, folder, [](const std::string& dir) { bs::load_model(dir); });
      std::cout << "wrote " << bv.out_dir << "/model.json and " << folder.tensors.size() << " tensors ("
                << folder.model["weights"].get<std::string>() << " weights)\n";
    } else if (active == ionnx) {
      if (ox.model_path.empty()) bs::usage_fail("FILE", "name the .onnx file to import");
      bs::require(*ionnx, "--out", "the model folder to write");
      bs::check_model_folder_target(ox.out_dir);
      if (!bs::onnx_import_available())
        bs::fail("import-onnx", "this build reads no ONNX: install libonnx-dev and libprotobuf-dev (scripts/setup.sh) and build again");
      const bs::OnnxImport r = bs::convert_onnx(ox);
      bs::write_model_folder(ox.out_dir, r.folder, [](const std::string& dir) { bs::load_model(dir); });
      for (const std::string& note : r.notes) std::cout << note << "\n";
      std::cout << "wrote " << ox.out_dir << "/model.json (" << r.folder.model["layers"].size() << " layers) and "
                << r.folder.tensors.size() << " tensors\n";
    } else if (active == rar) {
      if (ra.in.empty()) bs::usage_fail("FILE", "name the .npy to rearrange");
      bs::require(*rar, "--from", "the layout the file is in");
      bs::require(*rar, "--to", "the layout to write");
      bs::require(*rar, "--out", "the .npy to write");
      const bool fc = ra.from.rfind("fc-", 0) == 0 || ra.to.rfind("fc-", 0) == 0;
      if (fc && !rar->count("--input-chw"))
        bs::usage_fail("--input-chw", "needed with --from/--to " + (ra.from.rfind("fc-", 0) == 0 ? ra.from : ra.to) +
                                          ": the C,H,W of the feature map the fully connected layer flattens, e.g. 256,6,6");
      if (!fc && rar->count("--input-chw")) bs::usage_fail("--input-chw", "applies to fc-hwc and fc-chw only");
      bs::rearrange_file(ra);
      std::cout << "wrote " << ra.out << " (" << ra.from << " -> " << ra.to << ")\n";
    } else if (active == syn) {
      bs::require(*syn, "--out", "the model folder to write");
      (void)bs::synthesize_zoo(synth_model, seed, false);  // an unknown name fails here, listing the zoo
      const bool npy = synth_out.size() > 4 && synth_out.compare(synth_out.size() - 4, 4, ".npy") == 0;
      if (npy && synth_model != "alexnet")
        bs::usage_fail("--out", synth_out + ": only alexnet is written as a .npy (the bvlc_alexnet.npy format); give a folder");
      if (npy) {
        bs::write_bvlc(synth_out, bs::synthesize_alexnet(seed));
        std::cout << "wrote " << synth_out << " (synthetic AlexNet weights, seed " << seed << ", bvlc_alexnet.npy format)\n";
      } else {
        bs::check_model_folder_target(synth_out);
        std::cerr << "synthesize: drawing the weights of " << synth_model << "\n";
        const bs::ZooModel z = bs::synthesize_zoo(synth_model, seed);
        bs::write_model_folder(synth_out, z.folder, [](const std::string& dir) { bs::load_model(dir); });
        std::cout << "wrote " << synth_out << "/model.json (" << synth_model << ", " << z.folder.model["layers"].size()
                  << " layers, " << z.parameters << " parameters, synthetic weights, seed " << seed << ")\n";
      }
    }
  } catch (const bs::UsageError& e) {
    return error_line(e.what(), 2);
  } catch (const bs::Error& e) {
    return error_line(e.what(), 1);
  } catch (const std::exception& e) {
    std::cerr << "batchscope-weights: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

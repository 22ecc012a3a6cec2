#include "app/commands/infer.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <iostream>

#include "app/exec/datasets.hpp"
#include "app/exec/input_precision.hpp"
#include "app/cli/flags.hpp"
#include "app/exec/executor.hpp"
#include "app/results/results_io.hpp"
#include "app/exec/world.hpp"
#include "kernels/exec/device_info.hpp"
#include "kernels/cpu/ref_ops.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/npy.hpp"

namespace bs {

void InferOptions::add_to(CLI::App& app) {
  cmd = &app;
  app.add_option("--model", model_dir, "model folder (or its model.json, or a shipped model: ece408, alexnet)")->type_name("DIR");
  add_int(app, "--images", images, "use the first N images of the test set (default: all)", 1);
  add_int(app, "--batch", batch, "images per forward pass (default: all at once)", 1);
  run.add_to(app, {BackendKind::cpu});
  app.add_option("--data", data, "IDX images (gzipped or not); default: the shipped set matching the input")->type_name("FILE");
  app.add_option("--labels", labels, "IDX labels for --data")->type_name("FILE");
  app.add_option("--input", input, "run this float (N, C, H, W) .npy instead of a test set")->type_name("FILE");
  app.add_option("--output", output, "with --input: write the outputs here as .npy: (N, classes), or (N, C, H, W) where the model ends in a feature map")->type_name("FILE");
  app.add_flag("--layer-times", layer_times, "also print each layer's time, implementation, GFLOP/s and GB/s");
  add_int(app, "--reps", reps, "timed repetitions over the whole set; times are medians (min, max follow)", 1, 1000000);
  add_int(app, "--warmup", warmup, "untimed repetitions first", 0, 1000000);
  app.add_flag("--probabilities", probabilities, "with --input: write softmax probabilities, not logits");
  app.footer(
      "Examples (shipped models resolve by name from any directory):\n"
      "  batchscope infer --model ece408\n"
      "  batchscope infer --model ece408 --images 1000 --batch 100 --backend cpu-ref\n"
      "  batchscope infer --model ece408 --backend cuda --conv-variant fused --layer-times\n"
      "  batchscope infer --model alexnet --backend cuda --conv-variant gemm-3xtf32 --batch 128 --images 1024\n"
      "  batchscope infer --model ece408 --input x.npy --output logits.npy");
}

void InferOptions::validate(BackendKind backend) const {
  require(*cmd, "--model", "the model folder, its model.json, or a shipped model (ece408, alexnet)");
  if (!data.empty() && labels.empty()) usage_fail("--data", "needs --labels too");
  if (data.empty() && !labels.empty()) usage_fail("--labels", "needs --data too");
  if (!input.empty() && output.empty()) usage_fail("--input", "needs --output");
  if (input.empty() && !output.empty()) usage_fail("--output", "needs --input");
  if (!input.empty() && !data.empty()) usage_fail("--input", "cannot be combined with --data");
  if (!input.empty() && cmd->count("--images")) usage_fail("--images", "applies to a test set, not to --input (which runs every image of the file)");
  if (!input.empty() && (cmd->count("--reps") || cmd->count("--warmup") || layer_times))
    usage_fail(cmd->count("--reps") ? "--reps" : cmd->count("--warmup") ? "--warmup" : "--layer-times",
               "applies to a test set, not to --input (which runs the file once)");
  if (probabilities && input.empty()) usage_fail("--probabilities", "applies only with --input/--output");
  run.validate(backend);
}

namespace {

int run_tensor(const InferOptions& o, const Executor& ex, Backend& b) {
  const Model& m = ex.model();
  Array x = read_npy(o.input);
  if (x.shape.size() != 4 || x.shape[1] != m.input.c || x.shape[2] != m.input.h || x.shape[3] != m.input.w)
    fail(o.input, "shape (N, " + std::to_string(m.input.c) + ", " + std::to_string(m.input.h) + ", " +
                      std::to_string(m.input.w) + ") expected, file has " + shape_str(x.shape));
  const int n = static_cast<int>(x.shape[0]);
  std::vector<float> in = x.to_float();
  const size_t layers = m.logits_layers();
  std::vector<float> y = ex.run_batches(b, in.data(), ex.convert(in.data(), in.size()), n, o.batch, layers, nullptr);
  const int64_t f = layers ? m.layers[layers - 1].out.size() : m.input.size();
  // A chain that ends in a feature map (no flatten or fully connected layer) writes (N, C, H, W).
  bool vector_out = false;  // features are flat from the first flatten or fully connected layer on
  for (size_t i = 0; i < layers; ++i) vector_out |= m.layers[i].kind() == LayerKind::flatten || m.layers[i].kind() == LayerKind::fc;
  const Shape s = layers ? m.layers[layers - 1].out : m.input;
  if (o.probabilities && !vector_out)
    fail("--probabilities", "the model ends in a feature map " + to_string(s) + ", not in class scores");
  if (o.probabilities) ref::softmax(y.data(), n, f, y.data());
  std::vector<int64_t> shape = vector_out ? std::vector<int64_t>{n, f} : std::vector<int64_t>{n, s.c, s.h, s.w};
  write_npy(o.output, Array::from_float(shape, y));
  std::cout << "wrote " << o.output << " " << shape_str(shape) << " "
            << (o.probabilities ? "probabilities" : vector_out ? "logits" : "feature maps") << " from backend "
            << b.name() << "\n";
  return 0;
}

}  // namespace

int run_infer(const InferOptions& o) {
  World& world = World::get();
  const BackendKind kind = o.run.resolve_backend();
  o.validate(kind);
  if (world.parallel() && !o.input.empty())
    usage_fail("--input", "runs as one process; under mpirun infer splits a labelled test set across the ranks");
  if (!o.output.empty()) check_writable(o.output, "--output");
  Model m;
  std::unique_ptr<Executor> ex;
  std::unique_ptr<Backend> b;
  LabelledImages set;
  std::string images = o.data, labels = o.labels;
  int first = 0, count = 0;  // this rank's shard of the test set
  world.step([&] {
    if (is_gpu(kind)) place_rank_on_gpu(world);
    m = load_model_arg(o.model_dir);
    BackendOptions opts = o.run.options(kind);
    if (!is_gpu(kind)) share_cores(world, opts);
    world.fault_point("load");
    ex = std::make_unique<Executor>(m, kind, opts);
    b = ex->open();
    if (!o.input.empty()) return;
    if (images.empty()) pick_shipped_dataset(m.input, images, labels);
    set = load_labelled(images, labels, o.images, "--images");
    if (set.shape != m.input)
      fail(images, "images of shape " + to_string(set.shape) + " do not fit the model's input " + to_string(m.input));
    if (set.count < world.size())
      fail("--images", std::to_string(set.count) + " images for " + std::to_string(world.size()) + " ranks");
    const std::vector<int> shares = split_evenly(set.count, world.size());
    for (int r = 0; r < world.rank(); ++r) first += shares[r];
    count = shares[world.rank()];
  });
  if (!o.input.empty()) return run_tensor(o, *ex, *b);
  if (world.root()) {
    std::cerr << "Loaded " << set.count << " images from " << images << "; model " << m.name << " (" << m.weights_note
              << " weights), backend " << b->name();
    if (world.parallel()) std::cerr << "; " << world.size() << " ranks, " << describe_split(split_evenly(set.count, world.size())) << " images";
    std::cerr << "\n";
  }

  const size_t layers = m.logits_layers();
  const float* shard = set.images.data() + static_cast<size_t>(first) * m.input.size();
  // --input-precision u8 / fp16 / bf16: the shard in that type, converted once, before anything is timed.
  const std::vector<uint8_t> shard_conv = ex->convert(shard, static_cast<size_t>(count) * m.input.size());
  std::vector<RunStats> runs(o.reps);
  std::vector<double> totals;
  std::vector<float> logits;
  world.step([&] {
    for (int w = 0; w < o.warmup; ++w) ex->run_batches(*b, shard, shard_conv, count, o.batch, layers, nullptr);
  });
  for (int r = 0; r < o.reps; ++r) {  // under mpirun every repetition starts and ends together on every rank
    const auto t0 = std::chrono::steady_clock::now();
    world.step([&] {
      if (r == 0) world.fault_point("infer");
      logits = ex->run_batches(*b, shard, shard_conv, count, o.batch, layers, &runs[r]);
    });
    totals.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (o.reps > 1 && world.root()) std::cerr << "\rrepetition " << r + 1 << "/" << o.reps << std::flush;
  }
  if (o.reps > 1 && world.root()) std::cerr << "\n";
  auto stat = [&](auto get) {  // median, min, max over the repetitions; under mpirun the slowest rank's
    std::vector<double> v;
    for (const RunStats& s : runs) v.push_back(get(s));
    std::sort(v.begin(), v.end());
    return std::array<double, 3>{world.max(v[v.size() / 2]), world.max(v.front()), world.max(v.back())};
  };
  std::vector<std::array<double, 3>> layer_t(layers);
  for (size_t i = 0; i < layers; ++i) layer_t[i] = stat([&](const RunStats& s) { return s.layer_seconds[i]; });
  const int64_t classes = m.layers[layers - 1].out.size();
  long long correct = 0;
  std::string nan_error;
  for (int i = 0; i < count && nan_error.empty(); ++i) {
    const float* row = logits.data() + int64_t{i} * classes;
    int best = 0;
    for (int c = 1; c < classes; ++c)
      if (row[c] > row[best]) best = c;
    if (std::isnan(row[best])) nan_error = "produced NaN outputs for image " + std::to_string(first + i);
    correct += best == set.labels[first + i];
  }
  world.step([&] {
    if (!nan_error.empty()) fail(b->name(), nan_error);
  });
  correct = world.sum(correct);
  std::sort(totals.begin(), totals.end());
  const double total = world.max(totals[totals.size() / 2]);
  if (!world.root()) return 0;
  for (size_t i = 0; i < layers; ++i)
    if (m.layers[i].kind() == LayerKind::conv) std::cout << "Op Time: " << fmt_num(layer_t[i][0]) << "\n";
  if (o.layer_times) {
    std::cout << "# layer, type, implementation, median s, min s, max s, GFLOP/s, GB/s (activations in+out, weights)\n";
    for (size_t i = 0; i < layers; ++i) {
      const Layer& l = m.layers[i];
      const auto& t = layer_t[i];
      const double flops = l.flops_per_image() * set.count;
      const double bytes = 4.0 * ((l.in.size() + l.out.size()) * static_cast<double>(set.count) + l.weight_count());
      char buf[256];
      std::snprintf(buf, sizeof buf, "Layer %s, %s, %s, %.6g, %.6g, %.6g, %.1f, %.1f\n", l.name.c_str(), l.type_name().c_str(),
                    b->describe(i).c_str(), t[0], t[1], t[2], t[0] > 0 ? flops / t[0] * 1e-9 : 0.0, t[0] > 0 ? bytes / t[0] * 1e-9 : 0.0);
      std::cout << buf;
    }
  }
  std::cout << "Total Time: " << fmt_num(total) << " (" << set.count
            << " images, batch " << (o.batch ? o.batch : count) << ", backend " << b->name()
            << (world.parallel() ? ", " + std::to_string(world.size()) + " ranks" : std::string()) << ")\n";
  // The course scripts' line; a reduced precision says so after it (fp32 keeps the line as it always was).
  std::cout << "Correctness: " << fmt_num(static_cast<double>(correct) / set.count) << " Model: " << m.name
            << (o.run.precision != Precision::fp32 ? " Precision: " + name_of(o.run.precision) : std::string())
            << (o.run.input_precision != InputPrecision::fp32 ? " Input: " + name_of(o.run.input_precision) : std::string())
            << (o.run.weights != WeightFormat::native ? " Weights: " + name_of(o.run.weights) : std::string()) << "\n";
  return 0;
}

}  // namespace bs

#include "app/commands/infer.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <iostream>

#include "app/exec/datasets.hpp"
#include "app/exec/input_precision.hpp"
#include "app/exec/runner.hpp"
#include "app/exec/world.hpp"
#include "kernels/exec/device_info.hpp"
#include "kernels/cpu/ref_ops.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/npy.hpp"

namespace bs {

void InferOptions::add_to(CLI::App& app) {
  app.add_option("--model", model_dir, "model folder holding model.json")->required();
  app.add_option("--images", images, "use the first N images of the test set (default: all)")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "images per forward pass (default: all at once)")->check(CLI::PositiveNumber);
  app.add_option("--backend", backend, "cpu-ref | cpu | cuda | cudnn (those built in)")->capture_default_str();
  flags.add_to(app);
  app.add_option("--data", data, "IDX images (gzipped or not); default: the shipped set matching the input");
  app.add_option("--labels", labels, "IDX labels for --data");
  app.add_option("--input", input, "run this float (N, C, H, W) .npy instead of a test set");
  app.add_option("--output", output, "with --input: write the outputs (N, classes) here as .npy");
  app.add_flag("--layer-times", layer_times, "also print each layer's time, implementation, GFLOP/s and GB/s");
  app.add_option("--reps", reps, "timed repetitions over the whole set; times are medians (min, max follow)")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed repetitions first")->check(CLI::NonNegativeNumber);
  app.add_flag("--probabilities", probabilities, "with --input: write softmax probabilities, not logits");
  app.footer(
      "Examples:\n"
      "  batchscope infer --model data/models/ece408\n"
      "  batchscope infer --model data/models/ece408 --images 1000 --batch 100 --backend cpu-ref\n"
      "  batchscope infer --model data/models/ece408 --backend cuda --conv-variant fused --layer-times\n"
      "  batchscope infer --model data/models/alexnet --backend cuda --conv-variant gemm-3xtf32 --batch 128 --images 1024\n"
      "  batchscope infer --model data/models/ece408 --input x.npy --output logits.npy");
}

void InferOptions::validate() const {
  if (!data.empty() && labels.empty()) fail("--data", "needs --labels too");
  if (data.empty() && !labels.empty()) fail("--labels", "needs --data too");
  if (!input.empty() && output.empty()) fail("--input", "needs --output");
  if (input.empty() && !output.empty()) fail("--output", "needs --input");
  if (!input.empty() && !data.empty()) fail("--input", "cannot be combined with --data");
  if (probabilities && input.empty()) fail("--probabilities", "applies only with --input/--output");
  flags.validate(backend);
}

namespace {

int run_tensor(const InferOptions& o, const Model& m, Backend& b) {
  Array x = read_npy(o.input);
  if (x.shape.size() != 4 || x.shape[1] != m.input.c || x.shape[2] != m.input.h || x.shape[3] != m.input.w)
    fail(o.input, "shape (N, " + std::to_string(m.input.c) + ", " + std::to_string(m.input.h) + ", " +
                      std::to_string(m.input.w) + ") expected, file has " + shape_str(x.shape));
  const int n = static_cast<int>(x.shape[0]);
  std::vector<float> in = x.to_float();
  const size_t layers = m.logits_layers();
  const std::vector<uint8_t> conv = to_input_precision(in.data(), in.size(), o.flags.input_precision);
  std::vector<float> y = run_batches(b, m, in.data(), n, o.batch, layers, nullptr, conv.empty() ? nullptr : conv.data(),
                                     input_value_bytes(o.flags.input_precision));
  const int64_t f = layers ? m.layers[layers - 1].out.size() : m.input.size();
  if (o.probabilities) ref::softmax(y.data(), n, f, y.data());
  write_npy(o.output, Array::from_float({n, f}, y));
  std::cout << "wrote " << o.output << " (" << n << ", " << f << ") " << (o.probabilities ? "probabilities" : "logits")
            << " from backend " << b.name() << "\n";
  return 0;
}

}  // namespace

int run_infer(const InferOptions& o) {
  World& world = World::get();
  o.validate();
  if (world.parallel() && !o.input.empty())
    fail("--input", "runs as one process; under mpirun infer splits a labelled test set across the ranks");
  Model m;
  std::unique_ptr<Backend> b;
  LabelledImages set;
  std::string images = o.data, labels = o.labels;
  int first = 0, count = 0;  // this rank's shard of the test set
  world.step([&] {
    const bool gpu = o.backend == "cuda" || o.backend == "cudnn";
    if (gpu) place_rank_on_gpu(world);
    m = load_model(o.model_dir);
    BackendOptions opts = o.flags.options();
    if (!gpu) share_cores(world, opts);
    world.fault_point("load");
    b = open_backend(m, o.backend, opts);
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
  if (!o.input.empty()) return run_tensor(o, m, *b);
  if (world.root()) {
    std::cerr << "Loaded " << set.count << " images from " << images << "; model " << m.name << " (" << m.weights_note
              << " weights), backend " << b->name();
    if (world.parallel()) std::cerr << "; " << world.size() << " ranks, " << describe_split(split_evenly(set.count, world.size())) << " images";
    std::cerr << "\n";
  }

  const size_t layers = m.logits_layers();
  const float* shard = set.images.data() + static_cast<size_t>(first) * m.input.size();
  // --input-precision u8 / fp16 / bf16: the shard in that type, converted once, before anything is timed.
  const std::vector<uint8_t> shard_conv = to_input_precision(shard, static_cast<size_t>(count) * m.input.size(), o.flags.input_precision);
  const uint8_t* shard_c = shard_conv.empty() ? nullptr : shard_conv.data();
  const size_t value_bytes = input_value_bytes(o.flags.input_precision);
  std::vector<RunStats> runs(o.reps);
  std::vector<double> totals;
  std::vector<float> logits;
  world.step([&] {
    for (int w = 0; w < o.warmup; ++w) run_batches(*b, m, shard, count, o.batch, layers, nullptr, shard_c, value_bytes);
  });
  for (int r = 0; r < o.reps; ++r) {  // under mpirun every repetition starts and ends together on every rank
    const auto t0 = std::chrono::steady_clock::now();
    world.step([&] {
      if (r == 0) world.fault_point("infer");
      logits = run_batches(*b, m, shard, count, o.batch, layers, &runs[r], shard_c, value_bytes);
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
                    b->describe(l).c_str(), t[0], t[1], t[2], t[0] > 0 ? flops / t[0] * 1e-9 : 0.0, t[0] > 0 ? bytes / t[0] * 1e-9 : 0.0);
      std::cout << buf;
    }
  }
  std::cout << "Total Time: " << fmt_num(total) << " (" << set.count
            << " images, batch " << (o.batch ? o.batch : count) << ", backend " << b->name()
            << (world.parallel() ? ", " + std::to_string(world.size()) + " ranks" : std::string()) << ")\n";
  // The course scripts' line; a reduced precision says so after it (fp32 keeps the line as it always was).
  std::cout << "Correctness: " << fmt_num(static_cast<double>(correct) / set.count) << " Model: " << m.name
            << (o.flags.precision != "fp32" ? " Precision: " + o.flags.precision : std::string())
            << (o.flags.input_precision != "fp32" ? " Input: " + o.flags.input_precision : std::string()) << "\n";
  return 0;
}

}  // namespace bs

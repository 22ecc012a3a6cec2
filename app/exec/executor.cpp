#include "app/exec/executor.hpp"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "app/exec/input_precision.hpp"
#include "app/exec/world.hpp"
#include "kernels/exec/device_info.hpp"
#include "weights_tools/error.hpp"

namespace bs {

Executor::Executor(const Model& m, BackendKind backend, const BackendOptions& o) : model_(&m), kind_(backend), opts_(o) {
  const bool gpu = backend == BackendKind::cuda || backend == BackendKind::cudnn;
  if (gpu && !gpu_available()) make_backend(backend, o);  // the one line saying why no GPU backend runs here
  planner_ = std::make_shared<Planner>(m, backend, o, gpu ? current_device() : DeviceSpec{});
  planner_->pass(1);  // refuses, naming the layer, what no implementation of these options runs
}

void Executor::check(const std::vector<int>& batches) const {
  for (int n : batches) planner_->plan(n);
}

std::unique_ptr<Backend> Executor::open() const {
  std::unique_ptr<Backend> b = make_backend(kind_, opts_);
  b->load(*model_, planner_);
  return b;
}

std::vector<uint8_t> Executor::convert(const float* images, size_t values) const {
  return to_input_precision(images, values, opts_.input_precision);
}

std::vector<float> Executor::run_batches(Backend& b, const float* images, const std::vector<uint8_t>& converted, int count, int batch,
                                         size_t n_layers, RunStats* stats) const {
  const Model& m = *model_;
  const int64_t in_size = m.input.size();
  const int64_t out_size = n_layers ? m.layers[n_layers - 1].out.size() : in_size;
  const size_t value_bytes = input_value_bytes(opts_.input_precision);
  std::vector<float> out(static_cast<size_t>(out_size) * count);
  if (batch <= 0) batch = count;
  for (int start = 0; start < count; start += batch) {
    const int n = std::min(batch, count - start);
    const float* in = converted.empty() ? images + start * in_size
                                        : reinterpret_cast<const float*>(converted.data() + start * in_size * value_bytes);
    b.forward(in, n, n_layers, out.data() + start * out_size, stats);
  }
  return out;
}

void place_rank_on_gpu(World& world) {
  if (!world.parallel()) return;
  const int gpus = gpu_count();
  if (world.local_size() > gpus)
    fail("mpirun", std::to_string(world.local_size()) + " ranks on host " + world.host() + ", but it has " +
                       std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") + ": one rank per GPU");
  select_gpu(world.local_rank());
}

void share_cores(const World& world, BackendOptions& opts) {
  if (!world.parallel() || opts.threads > 0) return;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  opts.threads = std::max(1, static_cast<int>(cores) / world.local_size());
}

std::string fmt_num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

}  // namespace bs

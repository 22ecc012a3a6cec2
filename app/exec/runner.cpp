#include "app/exec/runner.hpp"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "app/exec/world.hpp"
#include "kernels/exec/device_info.hpp"
#include "weights_tools/error.hpp"

namespace bs {

std::unique_ptr<Backend> open_backend(const Model& m, const std::string& name, const BackendOptions& opts) {
  std::unique_ptr<Backend> b = make_backend(name, opts);
  for (const Layer& l : m.layers) {
    Support s = b->supports(l);
    if (!s.ok) fail("layer '" + l.name + "'", "backend " + b->name() + " does not support it: " + s.reason);
  }
  b->load(m);
  return b;
}

std::vector<float> run_batches(Backend& b, const Model& m, const float* images, int count, int batch,
                               size_t n_layers, RunStats* stats, const uint8_t* converted, size_t value_bytes) {
  const int64_t in_size = m.input.size();
  const int64_t out_size = n_layers ? m.layers[n_layers - 1].out.size() : in_size;
  std::vector<float> out(static_cast<size_t>(out_size) * count);
  if (batch <= 0) batch = count;
  for (int start = 0; start < count; start += batch) {
    const int n = std::min(batch, count - start);
    const float* in = converted ? reinterpret_cast<const float*>(converted + start * in_size * value_bytes) : images + start * in_size;
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

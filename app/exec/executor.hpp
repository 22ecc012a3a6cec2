// The one way every command (infer, classify, sweep, profile, throughput, tune, plan, and each MPI rank) opens and runs
// a model: plan first, then execute. The executor makes the planner for (model, backend, typed options, device), so
// that every refusal happens before anything is allocated (an unsupported layer names the layer; a batch that does not
// fit names the bytes needed and free); then it opens backend instances that run that planner's plans (several share
// it: throughput's workers), and runs batches through them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/exec/backend.hpp"
#include "kernels/plan/plan.hpp"

namespace bs {

class Executor {
 public:
  Executor(const Model& m, BackendKind backend, const BackendOptions& o);

  const Model& model() const { return *model_; }
  BackendKind kind() const { return kind_; }
  const BackendOptions& options() const { return opts_; }
  const Planner& planner() const { return *planner_; }
  // The whole plan for a batch of n; refuses what no implementation runs or what does not fit the device.
  Plan plan(int n) const { return planner_->plan(n); }
  // Plans every batch size now, so that a sweep refuses its largest batch before it measures its smallest.
  void check(const std::vector<int>& batches) const;
  // A backend instance running this executor's plans, the model's weights uploaded.
  std::unique_ptr<Backend> open() const;

  // The input in --input-precision's type (u8 / fp16 / bf16: converted on the host, before anything is timed); empty for
  // fp32, whose values go as they are.
  std::vector<uint8_t> convert(const float* images, size_t values) const;
  // Runs `count` images (N, C, H, W) through layers [0, n_layers) in batches of `batch` (0: all at once); returns the
  // outputs. converted: convert()'s bytes of the same images, or empty.
  std::vector<float> run_batches(Backend& b, const float* images, const std::vector<uint8_t>& converted, int count, int batch,
                                 size_t n_layers, RunStats* stats) const;

 private:
  const Model* model_;
  BackendKind kind_;
  BackendOptions opts_;
  std::shared_ptr<const Planner> planner_;
};

std::string fmt_num(double v);  // shortest of %.10g: 0.8397, 0.852, 0.84

class World;
// Under mpirun with a GPU backend: gives each rank the GPU of its node-local rank; more ranks on a host than
// it has GPUs is an error naming both numbers.
void place_rank_on_gpu(World& world);
// Under mpirun with a CPU backend and no --threads: the ranks on a host share its cores evenly.
void share_cores(const World& world, BackendOptions& opts);

}  // namespace bs

// Helpers shared by the subcommands: open a backend for a model (checking every layer is supported),
// run a batch loop, and format numbers the way the course's scripts printed them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/exec/backend.hpp"

namespace bs {

// Makes the backend, checks supports() for every layer (throwing "layer 'x': <backend> does not support
// it: <reason>"), and loads the model.
std::unique_ptr<Backend> open_backend(const Model& m, const std::string& name, const BackendOptions& opts);

// Runs `count` images (N, C, H, W) through layers [0, n_layers) in batches of `batch`; returns the outputs.
// converted: the same images in --input-precision u8 / fp16 / bf16 (to_input_precision), value_bytes each: what a
// backend with that input_precision reads.
std::vector<float> run_batches(Backend& b, const Model& m, const float* images, int count, int batch,
                               size_t n_layers, RunStats* stats, const uint8_t* converted = nullptr, size_t value_bytes = 0);

std::string fmt_num(double v);

class World;
// Under mpirun with a GPU backend: gives each rank the GPU of its node-local rank; more ranks on a host than
// it has GPUs is an error naming both numbers.
void place_rank_on_gpu(World& world);
// Under mpirun with a CPU backend and no --threads: the ranks on a host share its cores evenly.
void share_cores(const World& world, BackendOptions& opts);  // shortest of %.10g: 0.8397, 0.852, 0.84

}  // namespace bs

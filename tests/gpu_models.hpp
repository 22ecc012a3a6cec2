// Small models for the GPU tests (test_gpu_engine.cpp, test_gpu_wgmma_half.cpp): layers by kind, a model with its shapes
// inferred and He-scaled random weights, and one guarded forward pass.
#pragma once
#include <cmath>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "gpu_util.hpp"
#include "test_util.hpp"

namespace bs::test::models {

inline Layer conv_layer(const std::string& name, int filters, int k, int s, int p, int g) {
  return {name, test::conv_params(filters, k, s, p, g, true), {}, {}};
}
inline Layer fc_layer(const std::string& name, int outputs) {
  FcParams f;
  f.outputs = outputs;
  f.bias.resize(static_cast<size_t>(outputs));
  return {name, f, {}, {}};
}
inline Layer act_layer(const std::string& name, Act a) { return {name, ActParams{a}, {}, {}}; }
inline Layer pool_layer(const std::string& name, PoolKind kind, int k, int s, int p = 0, bool ceil = false) {
  PoolParams pp;
  pp.kind = kind; pp.kh = pp.kw = k; pp.sh = pp.sw = s; pp.ph = pp.pw = p; pp.ceil_mode = ceil;
  return {name, pp, {}, {}};
}
inline Layer lrn_layer(const std::string& name) {
  LrnParams l;
  l.size = 5; l.alpha = 1e-2f; l.beta = 0.75f; l.k = 2.0f;  // large alpha: the window sum matters
  return {name, l, {}, {}};
}

// Shapes inferred, then weights drawn: uniform in +-sqrt(3 / fan_in) (He-like scale, so that deep chains keep
// their activations near 1 and relative errors mean something).
inline Model build(const std::string& name, Shape input, std::vector<Layer> layers, std::mt19937& rng) {
  Model m;
  m.name = name;
  m.input = input;
  m.layers = std::move(layers);
  infer_shapes(m, name);
  for (Layer& l : m.layers) {
    auto fill = [&](std::vector<float>& w, size_t count, double fan_in) {
      w = test::random_vector(count, rng);
      const float scale = static_cast<float>(std::sqrt(3.0 / fan_in));
      for (float& x : w) x *= scale;
    };
    if (auto* c = std::get_if<ConvParams>(&l.op)) {
      const size_t fan = static_cast<size_t>(l.in.c / c->groups) * c->kh * c->kw;
      fill(c->weight, static_cast<size_t>(c->filters) * fan, static_cast<double>(fan));
      if (!c->bias.empty()) c->bias = test::random_vector(c->bias.size(), rng);
    }
    if (auto* f = std::get_if<FcParams>(&l.op)) {
      fill(f->weight, static_cast<size_t>(f->outputs) * l.in.size(), static_cast<double>(l.in.size()));
      if (!f->bias.empty()) f->bias = test::random_vector(f->bias.size(), rng);
    }
  }
  return m;
}

inline std::vector<float> run(Backend& b, const Model& m, const std::vector<float>& in, int n) {
  return test::guarded_forward(b, m, in, n).out;
}

}  // namespace bs::test::models

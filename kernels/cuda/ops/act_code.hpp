// The activation as the small integer the kernels branch on or are instantiated for: 0 ReLU, 1 tanh,
// 2 sigmoid, 3 leaky ReLU (the activation kernels only: never fused; -1, kNoAct in epilogue.cuh: none). Host-only
// code (the backends' plans) includes this alone.
#pragma once
#include "kernels/model/model.hpp"

namespace bs::cuda {

inline int act_code(Act act) { return act == Act::relu ? 0 : act == Act::tanh ? 1 : act == Act::sigmoid ? 2 : 3; }

}  // namespace bs::cuda

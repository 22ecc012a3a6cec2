// The activation as the small integer the kernels branch on or are instantiated for: 0 ReLU, 1 tanh,
// 2 sigmoid (-1, kNoAct in epilogue.cuh: none). Host-only code (the backends' plans) includes this alone.
#pragma once
#include "kernels/model/model.hpp"

namespace bs::cuda {

inline int act_code(Act act) { return act == Act::relu ? 0 : act == Act::tanh ? 1 : 2; }

}  // namespace bs::cuda

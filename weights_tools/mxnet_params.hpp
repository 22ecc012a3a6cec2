// MXNet .params files (the NDArray list that mx.nd.save and Module.save_checkpoint write):
// uint64 magic 0x112, uint64 reserved, uint64 count, the NDArrays, uint64 count, the names
// ("arg:conv0_weight", "aux:..."). NDArrays in the V1/V2/V3 layouts and the legacy one; dense only.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "weights_tools/npz.hpp"  // NamedArray

namespace bs {

std::vector<NamedArray> read_mxnet_params(const std::string& path);
// The same from bytes in memory; `path` names them in errors.
std::vector<NamedArray> parse_mxnet_params(const std::vector<uint8_t>& bytes, const std::string& path);

}  // namespace bs

// A probe build's per-block timeline of the GEMM engine's kernel (compiled in only with -DBS_TIMELINE, which the CMake
// option BATCHSCOPE_TIMELINE=ON gives conv_half.cu, conv_gemm.cu and gpu_pipeline.cpp; never the shipped binaries). Each block's thread 0 stamps %globaltimer at entry and
// exit and clock64 after the loaders' set-up, after the K loop and at exit; every translation unit that
// instantiates the engine holds its own record buffer and registers a dump here, and the GPU backend's destructor
// appends every buffer to the file in $BS_TIMELINE_OUT (one CSV line a block) and clears them.
#pragma once
#ifdef BS_TIMELINE
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace bs::cuda::timeline {
using DumpFn = void (*)(std::FILE*);
inline std::vector<DumpFn>& dumps() {
  static std::vector<DumpFn> v;
  return v;
}
inline int add(DumpFn f) {
  dumps().push_back(f);
  return 0;
}
inline void dump_all() {
  const char* path = std::getenv("BS_TIMELINE_OUT");
  if (!path) return;
  std::FILE* f = std::fopen(path, "a");
  if (!f) return;
  for (DumpFn d : dumps()) d(f);
  std::fclose(f);
}
}  // namespace bs::cuda::timeline
#endif

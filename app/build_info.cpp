#include "app/build_info.hpp"

#include "commit.h"  // generated in the build folder by cmake/commit.cmake

namespace bs {

const BuildInfo& build_info() {
  static const BuildInfo b{BATCHSCOPE_VERSION, BATCHSCOPE_COMMIT, BATCHSCOPE_DIRTY != 0, BATCHSCOPE_CUDA,
#ifdef BATCHSCOPE_HAVE_CUDA
                           true,
#else
                           false,
#endif
#ifdef BATCHSCOPE_HAVE_OPENCV
                           true,
#else
                           false,
#endif
#ifdef BATCHSCOPE_HAVE_MPI
                           true,
#else
                           false,
#endif
                           BATCHSCOPE_BUILD_TYPE, BATCHSCOPE_COMPILER};
  return b;
}

std::string build_commit() {
  const BuildInfo& b = build_info();
  return std::string(b.commit) + (b.dirty ? "+dirty" : "");
}

std::string version_text() {
  const BuildInfo& b = build_info();
  std::string s = std::string("batchscope ") + b.version + "\ncommit " + build_commit() + "\n";
  s += std::string("CUDA ") + (*b.cuda ? b.cuda : "no (built without the CUDA toolkit: cpu and cpu-ref backends only)") + "\n";
  s += std::string("cuDNN ") + (b.cudnn ? "yes" : "no") + ", OpenCV " + (b.opencv ? "yes" : "no (classify cannot decode photos)") +
       ", MPI " + (b.mpi ? "yes" : "no (runs as one process)") + "\n";
  s += std::string("build ") + b.build_type + ", " + b.compiler + "\n";
  return s;
}

}  // namespace bs

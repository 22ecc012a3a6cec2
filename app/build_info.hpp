// What these binaries are: the version, the commit they were built from (compiled in at build time, with a mark when
// the tree had uncommitted changes), and the optional parts built in. `batchscope --version` prints it; every results
// file records the commit.
#pragma once
#include <string>

namespace bs {

struct BuildInfo {
  const char* version;
  const char* commit;  // 40 hex digits, or "unknown" (not built from a git checkout)
  bool dirty;          // built from a tree with uncommitted changes
  const char* cuda;    // "13.0 (architectures 90)", or "" without CUDA
  bool cudnn, opencv, mpi;
  const char* build_type;
  const char* compiler;
};
const BuildInfo& build_info();
// The commit as results record it: 40 hex digits, "+dirty" appended for a tree with uncommitted changes.
std::string build_commit();
std::string version_text();  // `batchscope --version`

}  // namespace bs

// `batchscope variants`: every kernel menu, one line per version with what it runs, on any machine.
#pragma once

namespace bs {

int run_variants();

}  // namespace bs

#!/usr/bin/env python3
"""No option value is compared as a string after parsing (issue 31): every spelling a flag takes (--backend cuda,
--precision fp16, --transfers per-layer, ...) is parsed once into an enumeration or a flag where the command line is
read, and the code after that compares the typed values. This test fails on any comparison of such a spelling, as
`x == "fp16"` or `"fp16" != x`, in the C++ sources outside the parsing code.
Usage: no_option_strings.py SOURCE_DIR"""
import os
import re
import sys

# Every spelling of an option value (kernels/plan/options.hpp's tables, auto, and batchscope-weights' conventions).
SPELLINGS = ["cpu-ref", "cpu", "cuda", "cudnn", "fp32", "tf32", "fp16", "bf16", "u8", "resident", "per-layer", "overlapped",
             "pageable", "pinned", "fastest", "exact", "auto", "separate", "timed", "hwc", "chw", "valid", "same", "caffe",
             "tensorflow"]
# The parsing code: where spellings become typed values.
PARSING = {"app/cli/flags.cpp", "app/cli/run_flags.cpp", "kernels/plan/options.hpp", "kernels/plan/options.cpp",
           "kernels/plan/registry.cpp", "weights_tools/main.cpp"}
# Files that compare the same words as values read from a file, not from a flag.
FILE_VALUES = {"weights_tools/mxnet_import.cpp": {"valid"}}  # MXNet's pooling_convention attribute
quoted = "|".join(re.escape(s) for s in SPELLINGS)
PATTERN = re.compile(r'(?:[=!]=\s*"(?:%s)")|(?:"(?:%s)"\s*[=!]=)' % (quoted, quoted))


def main():
    src = sys.argv[1]
    bad = []
    for top in ("app", "kernels", "weights_tools"):
        for root, _, files in os.walk(os.path.join(src, top)):
            for f in files:
                if not f.endswith((".cpp", ".hpp", ".cu", ".cuh")):
                    continue
                path = os.path.join(root, f)
                rel = os.path.relpath(path, src)
                if rel in PARSING:
                    continue
                for n, line in enumerate(open(path, encoding="utf-8"), 1):
                    code = line.split("//")[0]
                    hits = {m.group(0).replace("=", "").replace("!", "").strip().strip('"') for m in PATTERN.finditer(code)}
                    if hits - FILE_VALUES.get(rel, set()):
                        bad.append(f"{rel}:{n}: {line.strip()}")
    for b in bad:
        print("an option value compared as a string after parsing:", b)
    print(f"{len(bad)} string comparisons of option values outside the parsing code")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

# Sourced by scripts/build.sh and scripts/check.sh, which configure with Ninja: it starts a target's compiles before the
# libraries it links are done (2 cores: the normal build 479 -> 434 s, the sanitizer build 290 -> 236 s against
# Makefiles; experiments/ci-time.md, "Ninja").
# ninja_dir WHO DIR: fails in one line where ninja is missing; removes DIR where another generator made it (a folder
# from before that change), since CMake refuses to switch a folder's generator.
ninja_dir() {
  command -v ninja >/dev/null || { echo "$1: ninja is missing (scripts/setup.sh installs it: ninja-build)" >&2; exit 1; }
  if [ -f "$2/CMakeCache.txt" ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$2/CMakeCache.txt"; then
    echo "$1: $2/ was made by another generator; removing it" >&2
    rm -rf "$2"
  fi
}

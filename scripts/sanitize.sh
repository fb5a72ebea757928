#!/usr/bin/env bash
# Builds and runs test executables under a sanitizer in build-<san>/.
#   scripts/sanitize.sh thread runtime_tests exec_tests
#   scripts/sanitize.sh address,undefined ir_tests pass_tests
set -euo pipefail
cd "$(dirname "$0")/.."
san=$1; shift
dir="build-$(echo "$san" | tr ',' '-')"
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
cmake -S . -B "$dir" "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPUPLAN_SANITIZE="$san" \
  -DNPUPLAN_BUILD_BENCH=OFF >/dev/null
status=0
for t in "$@"; do
  cmake --build "$dir" --target "$t" -j "${JOBS:-$(nproc)}"
  exe=$(find "$dir" -type f -name "$t" -perm -u+x | head -1)
  echo "== $t under -fsanitize=$san"
  TSAN_OPTIONS="halt_on_error=1" ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    "$exe" --gtest_brief=1 || status=1
done
exit $status

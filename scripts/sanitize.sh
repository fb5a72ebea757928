#!/usr/bin/env bash
# Builds and runs test executables under a sanitizer.
#   scripts/sanitize.sh thread runtime_tests exec_tests
#   scripts/sanitize.sh address,undefined ir_tests pass_tests
# Build folder: build-<san>/ (gcc, -DNPUPLAN_SANITIZE=<san>), or SAN_DIR: an
# existing configured tree whose flags already sanitize (e.g. build-fuzz/,
# clang + ASan + UBSan, which scripts/fuzz.sh configures with the tests on),
# so that CI compiles the libraries once for the fuzzers and the ASan tests.
# The target `npuplan` is built but not run: SAN_BAD_INPUTS=1 then runs the
# bad-input corpus (tests/bad_inputs.sh) with that sanitized binary.
# A new tree compiles with SAN_CXXFLAGS (default -O1 -g1: the optimisation
# level the sanitizers' manuals recommend, and line tables, which is all their
# reports print; about 40 % less compile CPU than RelWithDebInfo's -O2 -g).
# Prints "sanitize: N passed, N failed" (executables), exit 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
san=$1; shift
dir=${SAN_DIR:-"build-$(echo "$san" | tr ',' '-')"}
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
if [[ ! -f "$dir/CMakeCache.txt" ]]; then
  cmake -S . -B "$dir" "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="${SAN_CXXFLAGS:--O1 -g1} -DNDEBUG" -DNPUPLAN_SANITIZE="$san" \
    -DNPUPLAN_BUILD_BENCH=OFF >/dev/null || exit 1
fi
cmake --build "$dir" -j "${JOBS:-$(nproc)}" --target "$@" || exit 1
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
pass=0; fail=0
for t in "$@"; do
  exe=$(find "$dir" -type f -name "$t" -perm -u+x | head -1)
  if [[ "$t" == npuplan ]]; then
    [[ "${SAN_BAD_INPUTS:-0}" == 1 ]] || continue
    echo "== bad-input corpus with $exe (-fsanitize=$san)"
    # A sanitizer report makes the exit code or the message wrong: the case fails.
    if bash tests/bad_inputs.sh "$(cd "$(dirname "$exe")" && pwd)/npuplan"; then pass=$((pass+1)); else fail=$((fail+1)); fi
    continue
  fi
  echo "== $t under -fsanitize=$san"
  if "$exe" --gtest_brief=1; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAILED: $t"; fi
done
echo "sanitize: $pass passed, $fail failed"
[[ $fail -eq 0 ]]

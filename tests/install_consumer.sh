#!/usr/bin/env bash
# The installed package as a user sees it (issue 24, docs/api.md "Install"):
#   tests/install_consumer.sh BUILD_DIR
# 1. cmake --install BUILD_DIR into a temporary prefix: the CLI, the module
#    archives, only the public headers, npuplanConfig.cmake, npuplan.pc;
# 2. examples/consumer configured (find_package(npuplan CONFIG REQUIRED)),
#    built and run against that prefix: its plan must be the installed CLI's,
#    byte for byte, and verify;
# 3. the same main.cc built with `pkg-config --cflags --libs npuplan` and run.
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npuplan_install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install_consumer: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
prefix=$tmp/prefix
libdir=$(ls -d "$prefix"/lib*/cmake/npuplan | head -1); libdir=${libdir%/cmake/npuplan}
[[ -x $prefix/bin/npuplan ]] || fail "no bin/npuplan"
[[ -f $libdir/libnpuplan_api.a && -f $libdir/libnpuplan_support.a ]] || fail "module archives missing in $libdir"
headers=$(cd "$prefix/include" && find . -type f | sort | tr '\n' ' ')
want="./npuplan/api/compile.h ./npuplan/api/kernel.h ./npuplan/api/memplan.h ./npuplan/api/model.h ./npuplan/api/npuplan.h ./npuplan/api/plan.h ./npuplan/api/version.h "
[[ "$headers" == "$want" ]] || fail "installed headers are '$headers', expected '$want'"
# A public header includes only the standard library, abseil's status types and other public headers.
if grep -h '^#include' "$prefix"/include/npuplan/api/*.h | grep -v -E '#include (<[a-z_]+>|"absl/status/status(or)?\.h"|"npuplan/api/[a-z_]+\.h")$'; then
  fail "a public header includes something internal (above)"
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
graph=$root/examples/transformer_block.json
"$prefix/bin/npuplan" compile -q "$graph" --option ge.autoMultistreamParallelMode=CriticalPath:4 -o "$tmp/cli.plan.json"

# 2. CMake: find_package against the prefix only.
cmake -S "$root/examples/consumer" -B "$tmp/consumer" "${gen[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; fail "configuring examples/consumer"; }
grep -q "npuplan_DIR:PATH=$libdir/cmake/npuplan" "$tmp/consumer/CMakeCache.txt" || fail "npuplan was not found in the prefix"
cmake --build "$tmp/consumer" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "building examples/consumer"; }
"$tmp/consumer/plan_model" "$graph" "$tmp/api.plan.json" >"$tmp/run.log" || { cat "$tmp/run.log"; fail "plan_model"; }
grep -q '^verified; simulated makespan' "$tmp/run.log" || { cat "$tmp/run.log"; fail "plan_model did not verify"; }
cmp "$tmp/cli.plan.json" "$tmp/api.plan.json" || fail "the consumer's plan differs from the CLI's"
"$prefix/bin/npuplan" verify "$tmp/api.plan.json" >/dev/null || fail "npuplan verify rejects the consumer's plan"
# An error from the API is the CLI's error line.
api_err=$("$tmp/consumer/plan_model" "$tmp/missing.json" 2>&1 >/dev/null || true)
cli_err=$("$prefix/bin/npuplan" compile "$tmp/missing.json" -o "$tmp/x.json" 2>&1 || true)
[[ "$api_err" == "$cli_err" ]] || fail "error '$api_err' is not the CLI's '$cli_err'"

# 3. pkg-config.
export PKG_CONFIG_PATH=$libdir/pkgconfig
[[ "$(pkg-config --modversion npuplan)" == "$(sed -n 's/^#define NPUPLAN_VERSION_STRING "\(.*\)"$/\1/p' "$prefix/include/npuplan/api/version.h")" ]] ||
  fail "pkg-config version"
# shellcheck disable=SC2046
${CXX:-c++} -std=c++20 -O1 "$root/examples/consumer/main.cc" -o "$tmp/plan_model_pc" $(pkg-config --cflags --libs npuplan) ||
  fail "building main.cc with pkg-config"
"$tmp/plan_model_pc" "$graph" "$tmp/pc.plan.json" >/dev/null || fail "plan_model (pkg-config build)"
cmp "$tmp/cli.plan.json" "$tmp/pc.plan.json" || fail "the pkg-config build's plan differs from the CLI's"
echo "install_consumer: OK (prefix layout, public headers only, find_package and pkg-config consumers built, plans identical to the CLI's and verified)"

#!/usr/bin/env bash
# The Debian package (issue 24, docs/api.md "Install"):
#   tests/package_deb.sh BUILD_DIR
# cpack -G DEB into a temporary folder; checks the package's Depends (the
# run-time libraries dpkg-shlibdeps found for the CLI, and the -dev packages
# a consumer links against), its files (CLI, archives, public headers, CMake
# and pkg-config files), and that a project finds the unpacked package with
# find_package and pkg-config. Skips (77) when dpkg-deb is missing.
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
command -v dpkg-deb >/dev/null && command -v dpkg-shlibdeps >/dev/null || { echo "package_deb: SKIPPED: no dpkg-dev"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npuplan_deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "package_deb: FAIL: $*" >&2; exit 1; }

(cd "$tmp" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/pkg") >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
deb=$(ls "$tmp"/pkg/npuplan_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
echo "package_deb: $(basename "$deb"): Depends: $depends"
tr ',' '\n' <<<"$depends" | sed 's/^ *//; s/ .*//' >"$tmp/depends"
for p in libabsl20220623 libfmt9 libprotobuf32 libonnx1 libstdc++6 libc6 libabsl-dev libfmt-dev nlohmann-json3-dev \
         libprotobuf-dev libonnx-dev; do
  grep -qxF "$p" "$tmp/depends" || fail "Depends lacks $p"
done
dpkg-deb -c "$deb" | awk '{print $6}' >"$tmp/files"
for f in ./usr/bin/npuplan ./usr/include/npuplan/api/npuplan.h ./usr/include/npuplan/api/version.h \
         ./usr/lib/libnpuplan_api.a ./usr/lib/libnpuplan_compiler.a ./usr/lib/cmake/npuplan/npuplanConfig.cmake \
         ./usr/lib/cmake/npuplan/npuplanConfigVersion.cmake ./usr/lib/cmake/npuplan/npuplanTargets.cmake \
         ./usr/lib/pkgconfig/npuplan.pc ./usr/lib/npuplan/libnpuplan_onnx.so; do
  grep -qx "$f" "$tmp/files" || fail "the package lacks $f"
done
if grep -E '^\./usr/include/' "$tmp/files" | grep -v -E '^\./usr/include/(npuplan/(api/)?)?$|^\./usr/include/npuplan/api/[a-z_]+\.h$'; then
  fail "the package installs internal headers (above)"
fi

# Unpacked: the CMake package and the pkg-config file resolve from there.
dpkg-deb -x "$deb" "$tmp/root"
"$tmp/root/usr/bin/npuplan" --version >/dev/null || fail "the packaged CLI does not run"
# The packaged CLI finds its packaged ONNX plugin (lib/npuplan/, beside bin/).
"$tmp/root/usr/bin/npuplan" import --list-ops >/dev/null || fail "the packaged CLI does not load its ONNX plugin"
cmake -S "$root/examples/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/root/usr" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; fail "find_package"; }
grep -q "npuplan_DIR:PATH=$tmp/root/usr/lib/cmake/npuplan" "$tmp/consumer/CMakeCache.txt" || fail "not found in the package"
libs=$(PKG_CONFIG_PATH="$tmp/root/usr/lib/pkgconfig" pkg-config --libs npuplan)
[[ "$libs" == *"-L$tmp/root/usr/lib"*"-lnpuplan_api"*"-lnpuplan_support"* ]] || fail "pkg-config --libs: $libs"
echo "package_deb: OK"

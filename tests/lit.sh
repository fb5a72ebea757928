#!/usr/bin/env bash
# A 40-line stand-in for LLVM's lit (not packaged by Debian): runs the RUN
# lines of one .test file. Substitutions: %s the test file, %S its folder,
# %t a temporary path prefix shared by the RUN lines, %npuplan the tool, %root the source tree.
# FileCheck is Debian's FileCheck-14. `expect-exit N cmd…` runs cmd and
# fails unless it exits with N. RUN lines ending in '\' continue.
set -uo pipefail
test_file=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
npuplan=$2
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
FILECHECK=$(command -v FileCheck-14 || command -v FileCheck || true)
if [[ -z "$FILECHECK" ]]; then echo "FileCheck not found (install llvm-14-tools)"; exit 1; fi
expect-exit() {
  local want=$1; shift
  "$@"; local got=$?
  if [[ $got -ne $want ]]; then echo "expected exit $want, got $got: $*" >&2; return 1; fi
  return 0
}
export -f expect-exit
runs=()
cur=""
while IFS= read -r line; do
  if [[ "$line" =~ ^(//|#)\ RUN:\ (.*)$ ]]; then
    part=${BASH_REMATCH[2]}
    if [[ "$part" == *'\' ]]; then cur+="${part%\\} "; continue; fi
    runs+=("$cur$part"); cur=""
  fi
done < "$test_file"
[[ ${#runs[@]} -gt 0 ]] || { echo "no RUN lines in $test_file"; exit 1; }
i=0
for cmd in "${runs[@]}"; do
  i=$((i+1))
  cmd=${cmd//%npuplan/$npuplan}
  cmd=${cmd//%s/$test_file}
  cmd=${cmd//%S/$(dirname "$test_file")}
  cmd=${cmd//%t/$tmp/t}
  cmd=${cmd//%root/$root}
  cmd=${cmd//FileCheck /$FILECHECK }
  if ! (cd "$tmp" && bash -o pipefail -c "$cmd"); then
    echo "FAILED RUN line $i: $cmd"; exit 1
  fi
done
echo "PASS: $test_file (${#runs[@]} RUN lines)"

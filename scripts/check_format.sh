#!/usr/bin/env bash
# Checks that the C++ lines changed since BASE follow .clang-format
# (clang-format-14, Debian's package; `scripts/setup.sh --with format`).
#
#   scripts/check_format.sh [BASE]
#
# Only changed lines are checked (git clang-format): most files predate the
# check, and reformatting them whole would collide with everyone's work.
# "Changed" = every line that differs between BASE and the working tree
# (committed or not) in *.cc / *.h files. BASE is, in this order:
#   1. the argument, or $FORMAT_BASE;
#   2. the merge base with the main branch (origin/main, else main) when HEAD
#      is not on it: a branch is checked for everything it adds;
#   3. HEAD's first parent: on main itself (what CI's clone checks out) that
#      is what the newest commit brought — for a merge, the whole merged
#      branch.
# A clone without that history (depth 1) cannot be checked: the script says
# so and exits 0 unless FORMAT_REQUIRED=1.
# Exit 0: clean; 1: lines to reformat (the diff is printed; `git
# clang-format-14 --binary clang-format-14 --extensions cc,h BASE` applies it;
# without --extensions it also reindents staged JSON such as golden plans);
# 2: cannot run.
set -uo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
GIT_CLANG_FORMAT=${GIT_CLANG_FORMAT:-git-clang-format-14}
for tool in "$CLANG_FORMAT" "$GIT_CLANG_FORMAT"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "check_format: $tool not found (scripts/setup.sh --with format installs clang-format-14)" >&2
    exit 2
  fi
done

base=${1:-${FORMAT_BASE:-}}
how="given"
if [[ -z "$base" ]]; then
  for main in origin/main main; do
    git rev-parse -q --verify "$main^{commit}" >/dev/null || continue
    mb=$(git merge-base HEAD "$main" 2>/dev/null) || continue
    if [[ "$mb" != "$(git rev-parse HEAD)" ]]; then base=$mb; how="merge base with $main"; fi
    break
  done
fi
if [[ -z "$base" ]]; then
  if git rev-parse -q --verify "HEAD^1^{commit}" >/dev/null; then
    base=$(git rev-parse "HEAD^1"); how="HEAD's first parent"
  else
    echo "check_format: no base commit to compare with (a shallow clone?); nothing checked" >&2
    [[ "${FORMAT_REQUIRED:-0}" == 1 ]] && exit 2
    exit 0
  fi
fi
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
  echo "check_format: '$base' is not a commit" >&2
  exit 2
fi

out=$("$GIT_CLANG_FORMAT" --binary "$(command -v "$CLANG_FORMAT")" --extensions cc,h --diff "$base" 2>&1)
rc=$?
if [[ $rc -ne 0 ]]; then
  echo "check_format: git clang-format failed (exit $rc):" >&2
  echo "$out" >&2
  exit 2
fi
short=$(git rev-parse --short "$base")
if grep -q '^diff --git' <<<"$out"; then
  echo "$out"
  echo "check_format: lines changed since $short ($how) are not clang-formatted;" \
       "fix with: git clang-format-14 --binary clang-format-14 --extensions cc,h $short" >&2
  exit 1
fi
echo "check_format: lines changed since $short ($how) are clang-formatted"

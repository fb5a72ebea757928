#!/usr/bin/env python3
"""Checks each module's dependency lists against its #includes.

Every npuplan/<module>/CMakeLists.txt calls
  npuplan_module(<module> DEPS <module>... [TEST_DEPS <module>...] [LIBS ...])
(cmake/npuplan_module.cmake). Rules, per module M:
  1. DEPS name only modules before M in NPUPLAN_MODULES (the top-level
     CMakeLists.txt): no dependency points back up.
  2. M's library code (*.cc, *.h except the test files below) includes only
     headers of M and of its DEPS, and uses every module in DEPS.
  3. M's tests (*_test.cc, and test helpers *_testing.h / *_test_util.h)
     include only headers of M, its DEPS, its TEST_DEPS and npuplan/testing;
     TEST_DEPS are not in DEPS and are used by the tests.
Usage: scripts/check_deps.py [ROOT]; exit 0 when all hold, 1 otherwise (one
line per violation).
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
top = (root / "CMakeLists.txt").read_text()
m = re.search(r"set\(NPUPLAN_MODULES ([^)]*)\)", top)
if not m:
    sys.exit("check_deps: NPUPLAN_MODULES not found in CMakeLists.txt")
order = m.group(1).split()
INCLUDE = re.compile(r'^\s*#\s*include\s+"npuplan/([a-z_]+)/', re.M)


def is_test_file(p):
    return p.name.endswith(("_test.cc", "_testing.h", "_test_util.h"))


def includes(files):
    used = {}
    for f in files:
        for mod in INCLUDE.findall(f.read_text(errors="replace")):
            used.setdefault(mod, f.name)
    return used


errors = []
for pos, mod in enumerate(order):
    d = root / "npuplan" / mod
    cml = d / "CMakeLists.txt"
    if not cml.exists():
        continue
    call = re.search(r"npuplan_module\(\s*" + mod + r"\b([^)]*)\)", cml.read_text())
    if not call:
        errors.append(f"{mod}: no npuplan_module({mod} ...) call in {cml.relative_to(root)}")
        continue
    lists, key = {"DEPS": [], "TEST_DEPS": [], "LIBS": []}, None
    for word in call.group(1).split():
        if word in lists:
            key = word
        elif key is None or word.startswith("$"):
            errors.append(f"{mod}: cannot read '{word}' in npuplan_module (write the lists out)")
        else:
            lists[key].append(word)
    deps, test_deps = set(lists["DEPS"]), set(lists["TEST_DEPS"])
    for dep in sorted(deps):
        if dep not in order[:pos]:
            errors.append(f"{mod}: DEPS {dep} is not a module below {mod} in NPUPLAN_MODULES")
    for dep in sorted(test_deps & deps):
        errors.append(f"{mod}: {dep} is in both DEPS and TEST_DEPS")
    for dep in sorted(test_deps):
        if dep not in order or dep == mod:
            errors.append(f"{mod}: TEST_DEPS {dep} is not another module")
    files = sorted(p for p in d.iterdir() if p.suffix in (".cc", ".h"))
    lib = [p for p in files if not is_test_file(p)]
    tests = [p for p in files if is_test_file(p)]
    lib_used = includes(lib)
    for used, where in sorted(lib_used.items()):
        if used != mod and used not in deps:
            errors.append(f"{mod}: {where} includes npuplan/{used}/ but DEPS does not list {used}")
    for dep in sorted(deps - set(lib_used)):
        errors.append(f"{mod}: DEPS lists {dep} but no library file includes npuplan/{dep}/"
                      " (a test-only dependency belongs in TEST_DEPS)")
    test_used = includes(tests)
    for used, where in sorted(test_used.items()):
        if used not in deps | test_deps | {mod, "testing"}:
            errors.append(f"{mod}: {where} includes npuplan/{used}/ but neither DEPS nor TEST_DEPS lists {used}")
    for dep in sorted(test_deps - set(test_used)):
        errors.append(f"{mod}: TEST_DEPS lists {dep} but no test includes npuplan/{dep}/")

for e in errors:
    print(f"check_deps: {e}")
print(f"check_deps: {len(order)} modules, {len(errors)} violation(s)")
sys.exit(1 if errors else 0)

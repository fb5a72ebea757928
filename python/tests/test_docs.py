"""docs/api.md's examples are the files the tests run: examples/python/quickstart.py
here, examples/consumer/main.cc in ctest install_consumer."""
import os
import re
import subprocess
import sys

import pytest


def doc_examples(root):
    text = (root / "docs/api.md").read_text()
    return re.findall(r"<!-- example: (\S+) -->\n```[a-z]*\n(.*?)```\n", text, re.S)


def test_the_docs_examples_are_the_example_files(root):
    examples = doc_examples(root)
    assert {path for path, _ in examples} == {"examples/consumer/main.cc", "examples/python/quickstart.py"}
    for path, code in examples:
        assert code == (root / path).read_text(), f"docs/api.md's copy of {path} differs from the file"


def test_quickstart_runs_and_writes_the_clis_plan(cli, root, tmp_path):
    graph = root / "examples/transformer_block.json"
    out = tmp_path / "py.plan.json"
    r = subprocess.run([sys.executable, root / "examples/python/quickstart.py", graph, out], capture_output=True,
                       text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert "verified; simulated makespan" in r.stdout and "0 violation(s)" in r.stdout
    cli("compile", "-q", graph, "--option", "ge.autoMultistreamParallelMode=CriticalPath:4", "-o", tmp_path / "c.json")
    assert out.read_text() == (tmp_path / "c.json").read_text()
    err = cli.error("compile", graph, "--option", "ge.enableSingleStream=maybe", "-o", tmp_path / "x.json")
    assert f"error: {err}\n" in r.stdout

"""npuplan.kernel: on-chip cache planning of one kernel case (`npuplan kernel plan`, docs/kernel.md)."""

import json
import os

from . import _npuplan
from ._npuplan import KernelMetrics, KernelPlan, KernelSpill

__all__ = ["plan", "KernelPlan", "KernelMetrics", "KernelSpill"]


def plan(case, strategy="best", objective="balanced", *, name=None):
    """Plan a kernel case: a path to the contest's JSON, or the case as a dict or JSON text.

    strategy: "seed" | "best"; objective: "traffic" | "time" | "balanced".
    name: the case name for a dict or text (a file's stem otherwise). Returns a KernelPlan
    whose schedule_text() / memory_text() / spill_text() are the CLI's files and write(dir) writes them.
    """
    if isinstance(case, os.PathLike) or (isinstance(case, str) and not case.lstrip().startswith("{")):
        return _npuplan._kernel_plan("file", os.fspath(case), "", strategy, objective)
    text = case if isinstance(case, str) else json.dumps(case)
    return _npuplan._kernel_plan("json", text, name or "case", strategy, objective)

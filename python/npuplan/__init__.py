"""npuplan: compile a computation graph into a verified execution plan for an
NPU with hardware streams (docs/api.md).

    import npuplan
    plan = npuplan.compile("model.onnx", options={"ge.enableSingleStream": True},
                           input_shapes={"x": [1, 3, 48, 192]})
    print(plan.summary(), plan.nodes["conv1"].stream, plan.memory.peak)
    plan.verify()

A model is a path (native graph JSON, plan, or .onnx), an onnx.ModelProto,
ONNX bytes, a graph dict in the native format, or a Model from npuplan.load().
Errors raise an npuplan.Error subclass whose message is the text of the CLI's
`error:` line. Compiling, simulating, running and planning release the GIL.
"""

import collections.abc
import json
import os
import warnings as _warnings

from . import _npuplan
from ._npuplan import (Event, Memory, MemplanStats, Model, Node, Plan, RunResult, Simulation, Stream, StreamBusy,
                       Summary, Tensor)
from . import kernel

__version__ = _npuplan.__version__
VERSION = (_npuplan.VERSION_MAJOR, _npuplan.VERSION_MINOR, _npuplan.VERSION_PATCH)

__all__ = [
    "compile", "load", "read_plan", "memplan", "kernel", "Plan", "Model", "Node", "Stream", "Event", "Memory",
    "Tensor", "Summary", "Simulation", "StreamBusy", "RunResult", "MemplanStats", "Error", "InvalidArgumentError",
    "NotFoundError", "FailedPreconditionError", "ResourceExhaustedError", "DeadlineExceededError", "InternalError",
    "CompileWarning",
]


class Error(Exception):
    """An npuplan error; str(e) is the CLI's `error:` text. `code` names the status code."""
    code = "UNKNOWN"


class InvalidArgumentError(Error, ValueError):
    """Bad input or option (the CLI exits 1)."""
    code = "INVALID_ARGUMENT"


class NotFoundError(Error, FileNotFoundError):
    """An input file does not exist or cannot be opened."""
    code = "NOT_FOUND"


class FailedPreconditionError(Error):
    """A stage ran too early (e.g. a custom pass list without what a pass needs)."""
    code = "FAILED_PRECONDITION"


class ResourceExhaustedError(Error):
    """Infeasible: no plan fits (streams, events, memory capacity)."""
    code = "RESOURCE_EXHAUSTED"


class DeadlineExceededError(Error, TimeoutError):
    """A solver's time limit was reached."""
    code = "DEADLINE_EXCEEDED"


class InternalError(Error):
    """The verifier rejected a plan, or an internal check failed (a bug: please report it)."""
    code = "INTERNAL"


class AbortedError(Error):
    code = "ABORTED"


class CompileWarning(UserWarning):
    """What the CLI prints as `warning: …`: ONNX import warnings, option near-misses, options that do nothing."""


# absl::StatusCode values; -1 = any other code.
_npuplan._set_error_classes({
    3: InvalidArgumentError, 5: NotFoundError, 9: FailedPreconditionError, 8: ResourceExhaustedError,
    4: DeadlineExceededError, 13: InternalError, 10: AbortedError, -1: Error,
})


class NodeMap(collections.abc.Mapping):
    """plan.nodes: node name → Node, in the model's node order; looked up on demand."""
    __slots__ = ("_plan",)

    def __init__(self, plan):
        self._plan = plan

    def __getitem__(self, name):
        node = self._plan._node(name) if isinstance(name, str) else None
        if node is None:
            raise KeyError(name)
        return node

    def __contains__(self, name):
        return isinstance(name, str) and self._plan._node(name) is not None

    def __len__(self):
        return self._plan.num_nodes

    def __iter__(self):
        return iter(self._plan._node_names())


Plan.nodes = property(NodeMap, doc="The plan's nodes by name (a Mapping of Node)")


def _option_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _input_shapes(input_shapes):
    shapes = []
    for name, dims in (input_shapes or {}).items():
        if isinstance(dims, str):  # the CLI's spelling, "1x3x48x320" ("" = a scalar)
            dims = [int(d) for d in dims.split("x")] if dims else []
        shapes.append((str(name), [int(d) for d in dims]))
    return shapes


def _source(model, model_dir):
    """(kind, data, source, model_dir, Model or None) for the C++ side."""
    if isinstance(model, Model):
        return "model", "", "", "", model
    if isinstance(model, (str, os.PathLike)):
        return "file", os.fspath(model), "", "", None
    if isinstance(model, (bytes, bytearray, memoryview)):
        return "onnx", bytes(model), "<onnx bytes>", model_dir or "", None
    if isinstance(model, dict):
        return "json", json.dumps(model), "<dict>", "", None
    if hasattr(model, "SerializeToString"):  # onnx.ModelProto
        return "onnx", model.SerializeToString(), "<onnx.ModelProto>", model_dir or "", None
    raise TypeError("npuplan: a model is a path, an onnx.ModelProto, ONNX bytes, a graph dict or an npuplan.Model, "
                    f"not {type(model).__name__}")


def _warn(items, stacklevel=3):
    for w in items:
        _warnings.warn(w, CompileWarning, stacklevel=stacklevel)


def load(model, input_shapes=None, *, dims=None, engines=None, strict_shapes=False, allow_unknown_ops=False,
         model_dir=None, topo_sorting_mode=None, warn=True):
    """Load a model once (to compile it with several option sets): a Model.

    topo_sorting_mode: the ge.topoSortingMode its graphs are sorted in as they are read (the CLI's
    --option ge.topoSortingMode=…); a Model keeps that order whatever compile's options say.
    """
    kind, data, source, mdir, _ = _source(model, model_dir)
    if kind == "model":
        return model
    loaded = _npuplan._load(kind, data, source, mdir, _input_shapes(input_shapes),
                            {str(k): int(v) for k, v in (dims or {}).items()}, os.fspath(engines or ""),
                            bool(strict_shapes), bool(allow_unknown_ops), str(topo_sorting_mode or ""))
    if warn:
        _warn(loaded.warnings)
    return loaded


def compile(model, options=None, input_shapes=None, *, dims=None, engines=None, strict_shapes=False,
            allow_unknown_ops=False, model_dir=None, read_environment=True, verify_each=False, passes=None,
            keep_decisions=False, warn=True):
    """Compile a model into a verified Plan: `npuplan compile`.

    options: GE options (docs/options.md) as `--option KEY=VALUE`; True/False become "true"/"false".
    input_shapes: ONNX input name → dims (`--input-shape`); dims: symbolic dim → value (`--dim`).
    engines: an engine table file (`--engines`). passes: "a,b,c" (`--passes`).
    The CLI's warnings (ONNX import, then options) are issued as CompileWarning and kept in plan.warnings.
    """
    kind, data, source, mdir, loaded = _source(model, model_dir)
    plan = _npuplan._compile(kind, data, source, mdir, loaded, _input_shapes(input_shapes),
                             {str(k): int(v) for k, v in (dims or {}).items()}, os.fspath(engines or ""),
                             bool(strict_shapes), bool(allow_unknown_ops),
                             {str(k): _option_text(v) for k, v in (options or {}).items()}, bool(read_environment),
                             bool(verify_each), passes or "", bool(keep_decisions))
    if warn:  # a Model's import warnings were issued when it was loaded
        _warn(plan.warnings[len(loaded.warnings):] if kind == "model" else plan.warnings)
    return plan


def read_plan(path):
    """Read a plan file (npuplan.plan/1): `npuplan verify|simulate|run PLAN` read it so."""
    return Plan.read(os.fspath(path))


def _int_column(values, what):
    import numpy as _np  # imported on first use: `import npuplan` stays fast
    a = _np.asarray(values)
    if a.ndim != 1:
        raise ValueError(f"memplan: {what} must be one-dimensional")
    if a.size and not _np.issubdtype(a.dtype, _np.integer):
        if not _np.issubdtype(a.dtype, _np.number) or not _np.all(_np.mod(a, 1) == 0):
            raise ValueError(f"memplan: {what} must hold integers")
    return _np.ascontiguousarray(a, dtype=_np.int64)


def _ids(values):
    import numpy as _np
    a = _np.asarray(values)
    if _np.issubdtype(a.dtype, _np.number):
        return [str(int(v)) for v in a]
    return [str(v) for v in a]


def memplan(intervals, capacity=None, *, time_limit=10.0, target=0, max_nodes=0, max_steps=0, greedy_only=False,
            return_stats=False):
    """Pack buffers into one memory region: `npuplan memplan`. Returns the offsets (int64 array).

    intervals: an (N, 3) array of [lower, upper, size], an (N, 4) array of MiniMalloc's
    [id, lower, upper, size], or a mapping / structured array with "lower", "upper", "size"
    and optional "id", "alignment". Lifetimes are half-open [lower, upper).
    return_stats=True returns (offsets, MemplanStats).
    """
    import numpy as _np
    names = getattr(getattr(intervals, "dtype", None), "names", None)
    if isinstance(intervals, collections.abc.Mapping) or names:
        fields = intervals if not names else {n: intervals[n] for n in names}
        lower, upper, size = fields["lower"], fields["upper"], fields["size"]
        alignment = fields.get("alignment")
        ids = _ids(fields["id"]) if "id" in fields else []
    else:
        a = _np.asarray(intervals)
        if a.ndim != 2 or a.shape[1] not in (3, 4):
            raise ValueError("memplan: intervals must be (N, 3) [lower, upper, size] or (N, 4) [id, lower, upper, size]")
        ids = _ids(a[:, 0]) if a.shape[1] == 4 else []
        lower, upper, size = a[:, -3], a[:, -2], a[:, -1]
        alignment = None
    offsets, stats = _npuplan._memplan(
        _int_column(lower, "lower"), _int_column(upper, "upper"), _int_column(size, "size"),
        None if alignment is None else _int_column(alignment, "alignment"), ids,
        None if capacity is None else int(capacity), float(time_limit), int(target), int(max_nodes), int(max_steps),
        bool(greedy_only))
    return (offsets, stats) if return_stats else offsets

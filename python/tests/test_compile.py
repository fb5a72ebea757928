"""npuplan.compile and Plan against the CLI: same bytes, same errors."""
import json
import shutil
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import npuplan

EXAMPLE = "examples/transformer_block.json"


def conv_model():
    """x → conv1 → relu1 ┬→ conv2a ┬→ add → y (two branches: two streams)."""
    rng = np.random.default_rng(0)

    def weight(name, shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2a"], ["c2a"], name="conv2a", pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["r1", "w2b"], ["c2b"], name="conv2b", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2a", "c2b"], ["y"], name="add"),
    ]
    graph = helper.make_graph(
        nodes, "convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [weight("w1", [8, 3, 3, 3]), weight("w2a", [8, 8, 3, 3]), weight("w2b", [8, 8, 3, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def cli_plan(cli, tmp_path, *args):
    out = tmp_path / "cli.plan.json"
    cli("compile", "-q", *args, "-o", out)
    return out.read_text()


def test_compile_writes_the_cli_plan_byte_for_byte(cli, root, tmp_path):
    expected = cli_plan(cli, tmp_path, root / EXAMPLE)
    assert npuplan.compile(root / EXAMPLE).to_json() == expected
    assert npuplan.compile(str(root / EXAMPLE)).to_json() == expected
    # The same graph as a dict, and as a Model loaded once.
    assert npuplan.compile(json.loads((root / EXAMPLE).read_text())).to_json() == expected
    plan = npuplan.compile(root / EXAMPLE)
    plan.write(tmp_path / "api.plan.json")
    assert (tmp_path / "api.plan.json").read_text() == expected
    with pytest.raises(npuplan.InvalidArgumentError) as e:  # atomic: nothing half-written, the CLI's error
        plan.write(tmp_path / "no" / "such" / "dir.json")
    assert str(e.value) == cli.error("compile", "-q", root / EXAMPLE, "-o", tmp_path / "no" / "such" / "dir.json")
    model = npuplan.load(root / EXAMPLE)
    assert npuplan.compile(model).to_json() == expected
    assert npuplan.compile(model).to_json() == expected  # compiling copies: the Model stays usable


def test_options_are_the_clis_option_flags(cli, root, tmp_path):
    expected = cli_plan(cli, tmp_path, root / EXAMPLE, "--option", "ge.enableSingleStream=true",
                        "--option", "ge.event=notify")
    plan = npuplan.compile(root / EXAMPLE, options={"ge.enableSingleStream": True, "ge.event": "notify"})
    assert plan.to_json() == expected
    assert len(plan.streams) == 1
    golden = root / "testdata/plans/transformer_split_full"
    assert npuplan.compile(golden / "input.json", options={"npuplan.device.maxTasksPerStream": 64}).to_json() == \
        (golden / "expected.plan.json").read_text()


def test_option_warnings_and_topo_sorting_mode_are_the_clis(cli, root, tmp_path):
    out = tmp_path / "cli.plan.json"
    r = cli("compile", "-q", root / EXAMPLE, "--option", "ge.enableSingleStrem=true", "-o", out)
    cli_warnings = [l[len("warning: "):] for l in r.stderr.splitlines() if l.startswith("warning: ")]
    assert cli_warnings  # a near-miss of ge.enableSingleStream
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plan = npuplan.compile(root / EXAMPLE, options={"ge.enableSingleStrem": True})
    assert plan.warnings == cli_warnings
    assert [str(w.message) for w in caught if w.category is npuplan.CompileWarning] == cli_warnings
    assert plan.to_json() == out.read_text()
    # ge.topoSortingMode given as an option orders the graph as it is read, in the CLI and here.
    for mode in ("1", "2"):
        expected = cli_plan(cli, tmp_path, root / EXAMPLE, "--option", f"ge.topoSortingMode={mode}")
        assert npuplan.compile(root / EXAMPLE, options={"ge.topoSortingMode": mode}).to_json() == expected
        graph = json.loads((root / EXAMPLE).read_text())
        assert npuplan.compile(graph, options={"ge.topoSortingMode": mode}).to_json() == expected
        model = npuplan.load(root / EXAMPLE, topo_sorting_mode=mode)
        assert npuplan.compile(model, options={"ge.topoSortingMode": mode}).to_json() == expected


def test_plan_accessors_read_what_the_plan_file_says(root):
    plan = npuplan.compile(root / EXAMPLE)
    j = json.loads(plan.to_json())
    s = plan.summary()
    assert (s.nodes, s.logical_streams, s.physical_streams, s.events, s.notifies, s.memory_peak) == (
        j["summary"]["nodes"], j["summary"]["logical_streams"], j["summary"]["physical_streams"],
        j["summary"]["events"], j["summary"]["notifies"], j["summary"]["memory_peak"])
    assert s.stream_mode == j["streams"]["mode"] and s.stages == j["stages"]
    assert s.event_counts == j["event_counts"] and s.event_counts["device_event_ids"] == s.events
    assert [st.id for st in plan.streams] == [st["id"] for st in j["streams"]["list"]]
    assert sum(st.num_nodes for st in plan.streams) == sum(1 for n in j["nodes"].values() if n["logical_stream"] >= 0)
    assert [(e.id, e.kind, e.send, e.recv, e.reason) for e in plan.events] == \
        [(e["id"], e["kind"], e["send"], e["recv"], e["reason"]) for e in j["events"]]
    assert len(plan.nodes) == len(j["nodes"]) and set(plan.nodes) == set(j["nodes"])
    for name, node in j["nodes"].items():
        n = plan.nodes[name]
        assert (n.stream, n.logical_stream, n.tasks, n.topo_id, n.send_events, n.recv_events) == (
            node["stream"], node["logical_stream"], node["tasks"], node["topo_id"], node["send_events"],
            node["recv_events"])
    for e in (e for e in plan.events if e.send_attached < 0 and e.recv_attached < 0):
        assert (e.send_stream, e.recv_stream) == (plan.nodes[e.send].stream, plan.nodes[e.recv].stream)
    assert "no such node" not in plan.nodes
    with pytest.raises(KeyError):
        plan.nodes["no such node"]
    mem = plan.memory
    assert (mem.peak, mem.lower_bound, mem.alignment) == (j["memory"]["peak"], j["memory"]["lower_bound"],
                                                         j["memory"]["alignment"])
    assert [(t.node, t.offset, t.size) for t in mem.tensors] == \
        [(t["node"], t["offset"], t["size"]) for t in j["memory"]["tensors"]]
    plan.verify()


def test_onnx_model_proto_compiles_as_the_cli_compiles_its_file(cli, tmp_path):
    model = conv_model()
    path = tmp_path / "convnet.onnx"
    path.write_bytes(model.SerializeToString())
    expected = cli_plan(cli, tmp_path, path, "--input-shape", "x=1x3x32x32")
    by_path = npuplan.compile(path, input_shapes={"x": [1, 3, 32, 32]})
    by_proto = npuplan.compile(model, input_shapes={"x": [1, 3, 32, 32]})
    by_bytes = npuplan.compile(model.SerializeToString(), input_shapes={"x": "1x3x32x32"})
    assert by_path.to_json() == expected
    assert by_proto.to_json() == expected and by_bytes.to_json() == expected
    assert by_path.nodes["conv1"].stream >= 0 and by_path.nodes["conv1"].type == "Conv"
    assert by_path.memory.peak > 0
    # --dim pins the symbolic batch dim instead.
    assert npuplan.compile(path, dims={"batch": 1}).to_json() == cli_plan(cli, tmp_path, path, "--dim", "batch=1")


def test_onnx_warnings_are_the_clis(cli, tmp_path):
    model = conv_model()
    model.graph.node.append(helper.make_node("MyCustomOp", ["y"], ["z"], name="custom", domain="com.example"))
    model.graph.output[0].name = "z"
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    path = tmp_path / "custom.onnx"
    path.write_bytes(model.SerializeToString())
    r = cli("compile", "-q", path, "--allow-unknown-ops", "--input-shape", "x=1x3x32x32", "-o", tmp_path / "p.json")
    cli_warnings = [l[len("warning: "):] for l in r.stderr.splitlines() if l.startswith("warning: ")]
    assert cli_warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plan = npuplan.compile(path, allow_unknown_ops=True, input_shapes={"x": [1, 3, 32, 32]})
    assert plan.warnings == cli_warnings
    assert [str(w.message) for w in caught if w.category is npuplan.CompileWarning] == cli_warnings
    assert plan.to_json() == (tmp_path / "p.json").read_text()
    # Without --allow-unknown-ops the unknown op is an error, the CLI's.
    with pytest.raises(npuplan.InvalidArgumentError) as e:
        npuplan.compile(path, input_shapes={"x": [1, 3, 32, 32]})
    assert str(e.value) == cli.error("compile", path, "--input-shape", "x=1x3x32x32", "-o", tmp_path / "q.json")


def test_real_onnx_model(cli, model_cache, tmp_path):
    path = model_cache / "ch_ppocr_mobile_v2.0_cls_infer.onnx"
    if not path.exists():
        pytest.skip(f"{path} not cached (scripts/fetch_models.sh)")
    onnx = pytest.importorskip("onnx")
    expected = cli_plan(cli, tmp_path, path, "--input-shape", "x=1x3x48x192")
    plan = npuplan.compile(onnx.load(str(path)), input_shapes={"x": [1, 3, 48, 192]})
    assert plan.to_json() == expected
    assert len(plan.streams) >= 1 and plan.summary().nodes == len(plan.nodes)
    assert all(plan.nodes[e.send].stream == e.send_stream for e in plan.events)
    plan.verify()


def test_errors_raise_with_the_clis_message(cli, root, tmp_path):
    missing = tmp_path / "missing.json"
    with pytest.raises(npuplan.NotFoundError) as e:
        npuplan.compile(missing)
    assert str(e.value) == cli.error("compile", missing, "-o", tmp_path / "p.json")
    assert isinstance(e.value, FileNotFoundError) and e.value.code == "NOT_FOUND"

    with pytest.raises(npuplan.InvalidArgumentError) as e:
        npuplan.compile(root / EXAMPLE, options={"ge.enableSingleStream": "maybe"})
    assert str(e.value) == cli.error("compile", root / EXAMPLE, "--option", "ge.enableSingleStream=maybe",
                                     "-o", tmp_path / "p.json")
    assert isinstance(e.value, ValueError)

    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "npuplan.graph/1", "nodes": [{"name": "a", "type": "Relu", "inputs": ["b:0"]}]}')
    with pytest.raises(npuplan.Error) as e:
        npuplan.compile(bad)
    assert str(e.value) == cli.error("compile", bad, "-o", tmp_path / "p.json")

    onnx_path = tmp_path / "convnet.onnx"
    onnx_path.write_bytes(conv_model().SerializeToString())
    with pytest.raises(npuplan.InvalidArgumentError) as e:
        npuplan.compile(onnx_path, input_shapes={"x": [1, 3, 32]})
    assert str(e.value) == cli.error("compile", onnx_path, "--input-shape", "x=1x3x32", "-o", tmp_path / "p.json")

    with pytest.raises(npuplan.InvalidArgumentError):
        npuplan.compile({"format": "npuplan.graph/2"})
    with pytest.raises(TypeError):
        npuplan.compile(42)


def test_verify_simulate_and_run_are_the_clis(cli, root, tmp_path):
    plan_file = tmp_path / "p.json"
    cli("compile", "-q", root / EXAMPLE, "-o", plan_file)
    plan = npuplan.read_plan(plan_file)
    plan.verify()
    sim = plan.simulate(trace=tmp_path / "trace.json")
    assert sim.to_json() == cli("simulate", "--json", plan_file).stdout
    assert sim.report == cli("simulate", plan_file).stdout
    assert json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    assert sim.makespan_us >= sim.lower_bound_us > 0 and sim.critical_path
    assert {b.stream for b in sim.streams} >= {n.stream for n in plan.nodes.values() if n.tasks > 0}
    run = plan.run(jitter=1, repeat=2)
    assert run.violations == 0 and run.memory_races == 0 and run.runs == 2
    assert f"{run.tasks} tasks on {run.streams} streams" in cli("run", "--jitter", "1", "--repeat", "2",
                                                               plan_file).stdout

    # A plan whose events were dropped: verify fails with the CLI's message (it names the file).
    j = json.loads(plan_file.read_text())
    j["events"] = []
    broken = tmp_path / "broken.plan.json"
    broken.write_text(json.dumps(j))
    with pytest.raises(npuplan.Error) as e:
        npuplan.read_plan(broken).verify()
    assert str(e.value) == cli.error("verify", broken)


def test_verify_partial_and_write_are_the_clis(cli, root, tmp_path):
    # A pipeline that stops before the events stages: `verify` needs sync-events, `verify --partial` not.
    passes = "mark-unknown-shape-nodes,dynamic-shape-partition,logical-stream-assignment"
    plan = npuplan.compile(root / EXAMPLE, passes=passes)
    plan_file = tmp_path / "partial.plan.json"
    plan.write(plan_file)
    with pytest.raises(npuplan.Error) as e:
        plan.verify()
    assert "stage 'sync-events' is missing" in str(e.value)
    assert "stage 'sync-events' is missing" in cli.error("verify", plan_file)
    plan.verify(partial=True)
    cli("verify", "--partial", plan_file)
    # A folder as the target is refused as the CLI refuses it; nothing is left behind.
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(npuplan.InvalidArgumentError) as e:
        plan.write(tmp_path / "folder.json")
    assert str(e.value) == cli.error("compile", "-q", "--passes", passes, root / EXAMPLE, "-o", tmp_path / "folder.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder.json", "partial.plan.json"]


def test_version_is_the_clis(cli):
    assert cli("--version").stdout.splitlines()[0] == f"npuplan {npuplan.__version__}"
    assert npuplan.VERSION == tuple(int(p) for p in npuplan.__version__.split("."))
    assert npuplan._npuplan.library_version() == npuplan.__version__

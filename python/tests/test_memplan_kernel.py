"""npuplan.memplan (NumPy in, NumPy out) and npuplan.kernel.plan against the CLI."""
import csv
import io
import shutil

import numpy as np
import pytest

import npuplan


def read_offsets(text):
    return np.array([int(r["offset"]) for r in csv.DictReader(io.StringIO(text))], dtype=np.int64)


@pytest.mark.parametrize("case,flags", [
    ("input.12.csv", []),                                   # small: searched to the optimum
    ("A.1048576.csv", ["--max-steps", "20000", "--time-limit", "600"]),  # a MiniMalloc benchmark, step-bounded
])
def test_memplan_matches_the_cli_csv(cli, root, tmp_path, case, flags):
    path = root / "testdata/minimalloc" / case
    out = tmp_path / "out.csv"
    stdout = cli("memplan", path, *flags, "-o", out).stdout
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    cols = {k: np.array([int(r[k]) for r in rows], dtype=np.int64) for k in ("lower", "upper", "size")}
    cols["id"] = [r["id"] for r in rows]
    kwargs = {"max_steps": 20000, "time_limit": 600} if flags else {}
    offsets, stats = npuplan.memplan(cols, return_stats=True, **kwargs)
    assert offsets.dtype == np.int64 and offsets.shape == (len(rows),)
    np.testing.assert_array_equal(offsets, read_offsets(out.read_text()))
    assert f"peak: {stats.peak}\n" in stdout and f"lower_bound: {stats.lower_bound}\n" in stdout
    assert stats.peak == int(np.max(offsets + cols["size"]))
    if all(r["id"].isdigit() for r in rows):  # MiniMalloc's numeric ids: the CSV as one (N, 4) array
        table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
        np.testing.assert_array_equal(npuplan.memplan(table, **kwargs), offsets)
        if np.array_equal(table[:, 0], np.arange(len(table))):  # ids 0..N-1: the (N, 3) form too
            np.testing.assert_array_equal(npuplan.memplan(table[:, 1:], **kwargs), offsets)


def test_memplan_errors(cli, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,lower,upper,size\n0,5,5,8\n")
    with pytest.raises(npuplan.InvalidArgumentError) as e:
        npuplan.memplan(np.array([[0, 5, 5, 8]]))
    # The CLI names the file, the API the same rule for buffer 0.
    assert cli.error("memplan", bad).endswith(str(e.value))
    with pytest.raises(npuplan.ResourceExhaustedError):
        npuplan.memplan(np.array([[0, 2, 8], [1, 3, 8]]), capacity=15)
    with pytest.raises(ValueError):
        npuplan.memplan(np.zeros((3, 5)))
    with pytest.raises(ValueError):
        npuplan.memplan(np.array([[0.5, 2, 8]]))


def kernel_case(cli, root, tmp_path):
    shared = root.parent / "shared" / "data" / "kernels" / "Matmul_Case0.json"
    if shared.exists():
        shutil.copy(shared, tmp_path / "Matmul_Case0.json")
        return tmp_path / "Matmul_Case0.json"
    path = tmp_path / "mm.json"
    cli("kernel", "gen", "--kind", "matmul", "--m", "3", "--n", "3", "--k", "3", "--out", path)
    return path


def test_kernel_plan_writes_the_clis_files(cli, root, tmp_path):
    case = kernel_case(cli, root, tmp_path)
    out_cli, out_api = tmp_path / "cli", tmp_path / "api"
    out_cli.mkdir()
    out_api.mkdir()
    cli("kernel", "plan", case, "--out-dir", out_cli)
    r = npuplan.kernel.plan(case)
    r.write(str(out_api))
    stem = case.stem
    for suffix in ("_schedule.txt", "_memory.txt", "_spill.txt", "_q1_schedule.txt"):
        assert (out_api / (stem + suffix)).read_bytes() == (out_cli / (stem + suffix)).read_bytes(), suffix
    assert r.name == stem and r.schedule_text() == (out_cli / f"{stem}_schedule.txt").read_text()
    assert len(r.spills) == r.metrics.spills
    # The case as text gives the same plan.
    assert npuplan.kernel.plan(case.read_text(), name=stem).schedule == r.schedule
    with pytest.raises(npuplan.InvalidArgumentError) as e:
        npuplan.kernel.plan(case, strategy="fastest")
    assert "fastest" in str(e.value)

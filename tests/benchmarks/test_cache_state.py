"""benchmarks/cache_state.py on a tiny dataset: each tool's child in each cache state answers
the question, checked against the data's truth (a wrong answer stops it), and the report's
ratio is the loop's cost over ours."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import cache_state
import peers
import peers_child

START = dt.datetime(2015, 3, 1, tzinfo=dt.UTC)


def tiny_spec(tmp_path: Path, tool: str, state: str) -> dict[str, object]:
    ds = peers.plan_dataset("tiny", START, START + dt.timedelta(days=4), 7, hole_rate=0.02,
                            rollup_share=0.5)
    manifest = peers.materialise(ds, tmp_path)
    case = peers.day_case(ds)
    return {"tool": tool, "state": state, "manifest": str(manifest), "calls": 3,
            "start": case.start.strftime(peers_child.KEY_FORMAT),
            "end": case.end.strftime(peers_child.KEY_FORMAT),
            "want": peers.expected_missing(ds, case.start, case.end, mixed=tool == "ours")}


@pytest.mark.parametrize("state", cache_state.STATES)
@pytest.mark.parametrize("tool", list(cache_state.TOOLS))
def test_each_child_answers_the_day_right(tmp_path: Path, tool: str, state: str) -> None:
    spec = tiny_spec(tmp_path, tool, state)
    assert spec["want"], "the day holds the middle hole"
    if state != cache_state.AIRFLOW_LOADED:
        assert cache_state.child(spec) > 0
        return
    # Airflow's environment and logging are set for the whole process: a child of its own,
    # as the benchmark runs it.
    out = subprocess.run([sys.executable, cache_state.__file__, "--child", json.dumps(spec)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout.strip().splitlines()[-1]) > 0
    assert (tmp_path / "airflow-home").is_dir()  # the scratch home, not the user's


def test_a_wrong_answer_or_an_unknown_state_stops_the_child(tmp_path: Path) -> None:
    spec = tiny_spec(tmp_path, "ours", "warm")
    with pytest.raises(SystemExit, match="where the data says"):
        cache_state.child({**spec, "want": []})
    with pytest.raises(SystemExit, match="unknown state 'cold'"):
        cache_state.child({**spec, "state": "cold"})


def test_the_report_divides_the_loop_by_us() -> None:
    found = {state: {"ours": [0.0001, 0.0003, 0.0002], "exists": [0.0001] * 3,
                     "sqlite_keys": [0.00005] * 3} for state in cache_state.STATES}
    text = cache_state.report(found, 3, 10, ["--rounds", "3"])
    assert "Command: `python benchmarks/cache_state.py --rounds 3`" in text
    rows = [line for line in text.splitlines() if line.startswith("| warm")]
    assert rows == ["| warm | 0.200 | 0.100 | 0.050 | 0.50x |"]

"""`webrl bench env`: throughput of the in-process sites and of the real browser (JSON out)."""

import json

import pytest

from webrl.cli.main import main


def test_bench_env_http_prints_its_measures(capsys):
    assert main(["bench", "env", "--split", "test", "--sites", "forum", "--limit", "2", "--repeats", "1"]) == 0
    got = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert got["episodes"] == 2 and got["steps"] > 0 and got["steps_per_s"] > 0


def test_bench_env_chromium_runs_parallel_contexts(capsys):
    from webrl.env.chromium_engine import chromium_available

    if not chromium_available():
        pytest.skip("needs Chromium and playwright (`make test` installs both)")
    assert main(["bench", "env", "--backend", "chromium", "--split", "test", "--sites", "forum", "--limit", "2",
                 "--repeats", "1", "--parallel", "2"]) == 0  # fmt: skip
    got = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert got["backend"] == "chromium" and got["parallel"] == 2 and got["episodes"] >= 2 and got["steps"] > 0
    assert got["backend_errors"] == 0 and got["browser_mb_peak"] > 0 and got["step_ms_p50"] > 0

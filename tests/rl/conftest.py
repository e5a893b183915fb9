"""The cpu-tiny run that several test modules read (killed mid-rollout and mid-update, then
resumed), made once per session."""

import pytest
from support import train_cli


@pytest.fixture(scope="session")
def killed_run(tmp_path_factory):
    """A cpu-tiny run killed mid-rollout, then mid-update, then resumed: (run, sft, last stdout)."""
    from webrl.cli.main import main

    tmp_path = tmp_path_factory.mktemp("loop")
    sft = tmp_path / "sft"
    assert main(["sft", "--preset", "cpu-tiny", "--limit", "6", "--out", str(sft), "--no-progress"]) == 0
    run = tmp_path / "run"
    killed = train_cli(run, sft, "rollout:2")  # dies after the 2nd finished rollout episode of phase 1
    assert killed.returncode == 137, killed.stderr[-2000:]
    eps = (run / "phase-001" / "rollouts" / "episodes.jsonl").read_text().splitlines()
    assert len(eps) == 2
    killed = train_cli(run, sft, "actor:2")  # resumes the rollouts, dies at the actor's 2nd checkpoint
    assert killed.returncode == 137, killed.stderr[-2000:]
    assert (run / "phase-001" / "actor" / "ckpt-2" / "trainer_state.pt").exists()
    done = train_cli(run, sft, None)
    assert done.returncode == 0, done.stderr[-3000:]
    return run, sft, done.stdout

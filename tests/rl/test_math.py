"""WebRL's formulas on numbers worked out by hand (see the comments)."""

import math

import pytest
import torch

from webrl.rl.advantages import batch_advantages, mc_returns, webrl_advantages
from webrl.rl.curriculum_filter import critic_filter, phase_selection, window_selection
from webrl.rl.losses import (
    actor_loss,
    critic_loss,
    perplexity,
    released_actor_loss,
    sequence_logprob,
)
from webrl.rl.replay import ReplayBuffer, ppl_window, select_replay

V = torch.tensor([0.2, 0.5, 0.8])


def close(a, b):
    assert torch.allclose(torch.as_tensor(a, dtype=torch.float32), torch.tensor(b, dtype=torch.float32), atol=1e-4), (a, b)


def test_eq9_success():
    # t0: td = 0 + .5 - .2 = .3, mc = 1 - .2 = .8 -> .5*.3 + .5*.8 = .55
    # t1: td = 0 + .8 - .5 = .3, mc = .5 -> .40 ; t2: td = 1 + 0 - .8 = .2, mc = .2 -> .20
    close(webrl_advantages(V, 1.0), [0.55, 0.40, 0.20])


def test_eq9_failure():
    # t0: td .3, mc -.2 -> .05 ; t1: td .3, mc -.5 -> -.1 ; t2: td -.8, mc -.8 -> -.8
    close(webrl_advantages(V, 0.0), [0.05, -0.10, -0.80])


def test_eq9_lambda_and_gamma():
    # λ = 1 is the one-step TD error; λ = 0 the Monte-Carlo error
    close(webrl_advantages(V, 1.0, lam=1.0), [0.3, 0.3, 0.2])
    close(webrl_advantages(V, 1.0, lam=0.0), [0.8, 0.5, 0.2])
    # γ = .9: t0 td = .45-.2 = .25, mc = .81-.2 = .61 -> .43 ; t1 .22/.40 -> .31 ; t2 .2/.2 -> .2
    close(webrl_advantages(V, 1.0, gamma=0.9), [0.43, 0.31, 0.20])
    close(mc_returns(1.0, 3, 0.9), [0.81, 0.9, 1.0])
    close(batch_advantages([V, torch.tensor([0.4])], [1.0, 0.0]), [0.55, 0.40, 0.20, -0.40])


def test_eq8_critic_bce():
    # logit 0 -> p = .5, r = 1: ln 2 ; logit ln 3 -> p = .75, r = 0: -ln .25 = ln 4
    loss = critic_loss(torch.tensor([0.0, math.log(3)]), torch.tensor([1.0, 0.0]))
    close(loss, (math.log(2) + math.log(4)) / 2)


def test_eq6_actor_loss():
    logp = torch.tensor([-2.0, -1.0], requires_grad=True)
    ref = torch.tensor([-2.5, -1.0])
    adv = torch.tensor([0.5, -0.2])
    # log-ratios (.5, 0): β=1 -> ((.5-.5)² + (0+.2)²)/2 = .02 ; β=2 -> ((1-.5)² + .04)/2 = .145
    loss, info = actor_loss(logp, ref, adv, beta=1.0)
    close(loss, 0.02)
    close(actor_loss(logp, ref, adv, beta=2.0)[0], 0.145)
    loss.backward()
    # dL/dlogp_i = 2 β (β r_i - A_i) / N = (0, .2)
    close(logp.grad, [0.0, 0.2])


def test_released_variant():
    # sample 0: raw = .6-.5-.05+0+1 = 1.05 -> clamp 1 -> A = +1; ref prob e^-.6 = .55 < .8 -> β 1
    # sample 1: raw = .2-.5-.05 = -.35 -> A = -.6 -> masked out
    # count = 2 tokens (masked steps only); log-ratio0 = (-1 + 1.2)/2 = .1; cap |1/.1| = 10
    # SmoothL1(.1, 1) = .5 * .9² = .405 ; mean over 2 samples -> .2025
    loss, info = released_actor_loss(
        logp=torch.tensor([-1.0, -3.0]), ref_logp=torch.tensor([-1.2, -3.0]), n_tokens=torch.tensor([2.0, 3.0]),
        value=torch.tensor([0.5, 0.5]), next_value=torch.tensor([0.6, 0.2]),
        reward=torch.tensor([0.0, 0.0]), mc_return=torch.tensor([1.0, 0.0]),
    )  # fmt: skip
    close(loss, 0.2025)
    assert info["actor/positive"] == 1
    # confident reference (e^-.1 = .905 >= .8) -> β = 5: SmoothL1(.5, 1) = .125, / 5 = .025
    loss, _ = released_actor_loss(
        logp=torch.tensor([0.0]), ref_logp=torch.tensor([-0.2]), n_tokens=torch.tensor([2.0]),
        value=torch.tensor([0.5]), next_value=torch.tensor([0.6]), reward=torch.tensor([0.0]),
        mc_return=torch.tensor([1.0]),
    )  # fmt: skip
    close(loss, 0.025)


def test_perplexity_window_and_selection():
    tok = torch.tensor([[-0.1, -0.3, -9.0], [-0.01, -0.01, 0.0], [-1.0, -1.0, 0.0], [-0.5, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 0], [1, 1, 0], [1, 1, 0], [1, 0, 0]], dtype=torch.float32)
    close(sequence_logprob(tok, mask), [-0.4, -0.02, -2.0, -0.5])
    ppl = perplexity(tok, mask)  # e^.2 = 1.2214, e^.01 = 1.0101, e^1 = 2.7183, e^.5 = 1.6487
    close(ppl, [1.2214, 1.0101, 2.7183, 1.6487])
    assert ppl_window(ppl).tolist() == [True, False, False, True]
    assert select_replay(ppl, new_steps=5) == [0, 3]
    assert len(select_replay(ppl, new_steps=0.5)) == 1  # cap = 2 × 0.5 = 1 step


def test_critic_filter():
    assert critic_filter(torch.tensor([0.01, 0.05, 0.4, 0.75, 0.9])).tolist() == [False, True, True, True, False]


def test_phase_selection_samples_the_window_or_tops_up_to_a_full_phase():
    values = [0.01, 0.05, 0.4, 0.75, 0.9, 0.0]
    # in the window: 1, 2, 3; the rest by distance to the middle 0.4: 4 (0.5), 0 (0.39), 5 (0.4)
    assert phase_selection(values, 3, seed=0) == [1, 2, 3]
    assert phase_selection(values, 5, seed=0) == [1, 2, 3, 0, 5]
    assert phase_selection(values, 10, seed=0) == [1, 2, 3, 0, 5, 4]  # fewer candidates than the phase
    two = phase_selection(values, 2, seed=0)
    assert len(two) == 2 and set(two) <= {1, 2, 3} and two == sorted(two) == phase_selection(values, 2, seed=0)
    assert phase_selection([0.0] * 8, 4, seed=0) == [0, 1, 2, 3]  # V ≡ 0 (a one-class critic): still a full phase


def test_window_selection_keeps_only_the_window():
    values = [0.01, 0.05, 0.4, 0.75, 0.9, 0.0]
    assert window_selection(values, 10, seed=0) == [1, 2, 3]  # no top-up: `fill` decides what comes next
    assert window_selection([0.0] * 8, 4, seed=0) == []
    two = window_selection(values, 2, seed=3)
    assert len(two) == 2 and set(two) <= {1, 2, 3} and two == phase_selection(values, 2, seed=3)


def test_replay_buffer_keeps_successes_only(tmp_path):
    buf = ReplayBuffer(tmp_path / "replay.jsonl")
    eps = [{"task_id": 1, "success": True, "steps": [{}, {}]}, {"task_id": 2, "success": False, "steps": [{}]}]
    assert buf.add(eps, phase=0) == 1
    buf.add([{"task_id": 3, "success": True, "steps": [{}]}], phase=1)
    with buf.path.open("a") as f:
        f.write('{"task_id": 4, "succ')  # torn line from a crash
    assert [(e["task_id"], e["phase"]) for e in buf.load()] == [(1, 0), (3, 1)]
    assert len(list(buf.steps())) == 3


@pytest.mark.parametrize("n", [1, 4])
def test_eq9_terminal_value_is_zero(n):
    v = torch.full((n,), 0.5)
    assert webrl_advantages(v, 1.0, lam=1.0)[-1].item() == pytest.approx(0.5)  # 1 + 0 - .5

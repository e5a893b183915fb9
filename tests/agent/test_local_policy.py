"""LocalPolicy: batched generation with the KV cache, stopping, log-probs, scoring."""

import copy
import random

import pytest
import torch

from webrl.agent.local_policy import (
    LocalPolicy,
    SamplingParams,
    lookup_draft,
    pack_right,
    shared_prefix,
)


@pytest.fixture(scope="module")
def policy(tiny):
    model, tok = tiny
    return LocalPolicy(model, tok, max_batch_tokens=4096)


PROMPTS = ["<|im_start|>user\nTask: a<|im_end|>\n<|im_start|>assistant\n", "Task: buy two blue mugs and a red one", "x"]


def test_greedy_is_deterministic_and_batch_independent(policy):
    p = SamplingParams(max_new_tokens=12, end_of_action=False)
    batch = policy.generate(PROMPTS, p)
    again = policy.generate(PROMPTS, p)
    alone = [policy.generate([q], p)[0] for q in PROMPTS]
    for a, b, c in zip(batch, again, alone, strict=True):
        assert a.token_ids == b.token_ids == c.token_ids  # left padding + KV cache change nothing
        assert len(a.token_ids) == len(a.logprobs) <= 12
        assert a.finish_reason in ("stop", "length")
    assert batch[1].prompt_tokens == len(policy.encode(PROMPTS[1]))


def test_row_prefill_equals_the_batched_prefill(tiny):
    """Prefilling each prompt alone and left-padding the caches (the CPU default) decodes the
    same tokens with the same log-probs as one batched prefill over left-padded prompts."""
    model, tok = tiny
    p = SamplingParams(temperature=1.0, max_new_tokens=10, end_of_action=False)
    rows = LocalPolicy(model, tok, seed=5, prefill_rows=True)
    rows.row_overhead_tokens = 0  # these prompts are short: by default their padding is cheaper than a row's forward
    batched = LocalPolicy(model, tok, seed=5, prefill_rows=False)
    default = LocalPolicy(model, tok, seed=5)
    assert rows.prefill_rows and default.prefill_rows  # the default on the CPU
    a, b, c = (policy.generate(PROMPTS * 2, p) for policy in (rows, batched, default))
    assert rows.forwards - batched.forwards == len(PROMPTS) * 2 - 1  # a prefill per prompt, not one
    assert default.forwards == batched.forwards  # short prompts: padding is cheaper than a forward each
    assert [g.token_ids for g in c] == [g.token_ids for g in b]
    for x, y in zip(a, b, strict=True):
        assert x.token_ids == y.token_ids and x.finish_reason == y.finish_reason
        assert max(abs(u - v) for u, v in zip(x.logprobs, y.logprobs, strict=True)) < 1e-4


# An episode's prompts: the next one repeats the last one up to its page, then goes on differently.
STEP0 = "<|im_start|>user\nTask: buy two blue mugs and a red one for the kitchen\n\nURL: /shop\n" + "[Blue Mug](12) [Red Mug](13) " * 6
STEP1 = STEP0[: STEP0.index("URL")] + "URL: /shop [page omitted]<|im_end|>\n<|im_start|>assistant\ndo(click [12])\n" + "[Cart](3) " * 8


def test_shared_prefix_counts_leading_equal_items():
    assert shared_prefix((1, 2, 3, 4), (1, 2, 9, 4)) == 2
    assert shared_prefix((1, 2, 3), (1, 2, 3, 4, 5)) == 3
    assert shared_prefix((7,), (1,)) == 0 and shared_prefix((), (1, 2)) == 0
    a = tuple(range(1000))
    assert all(shared_prefix(a, a[:k] + (-1,) + a[k + 1 :]) == k for k in (0, 1, 499, 500, 998, 999))


def test_a_prompt_that_extends_an_earlier_one_prefills_only_the_rest(tiny):
    """The second step's prompt reuses the first's cached keys and values for their shared beginning;
    its tokens and log-probs are those of a policy without the cache (greedy and sampled)."""
    model, tok = tiny
    for params in (SamplingParams(max_new_tokens=8, end_of_action=False),
                   SamplingParams(temperature=1.0, max_new_tokens=8, end_of_action=False)):  # fmt: skip
        cached, plain = LocalPolicy(model, tok, seed=3), LocalPolicy(model, tok, seed=3, prefix_cache_tokens=0)
        n0, n1 = len(cached.encode(STEP0)), len(cached.encode(STEP1))
        shared = shared_prefix(tuple(cached.encode(STEP0)), tuple(cached.encode(STEP1)))
        assert shared >= cached.min_prefix_tokens  # the test's premise
        for step in ([STEP0, "x"], [STEP1, "y"]):  # batch 2: the first call prefills as one batch
            a, b = cached.generate(step, params), plain.generate(step, params)
            for x, y in zip(a, b, strict=True):
                assert x.token_ids == y.token_ids
                assert max(abs(u - v) for u, v in zip(x.logprobs, y.logprobs, strict=True)) < 1e-4
        assert cached.reused == shared and plain.reused == 0
        assert cached.prefilled < plain.prefilled
        assert list(cached._prefixes) == [tuple(cached.encode(STEP1))]  # STEP0's entry replaced; short ones skipped
        assert n0 + n1 <= cached.prefix_cache_tokens


def test_the_prefix_cache_is_forgotten_when_the_weights_change(tiny):
    model, tok = tiny
    model = copy.deepcopy(model)
    policy = LocalPolicy(model, tok, prefix_cache_tokens=4096)
    params = SamplingParams(max_new_tokens=6, end_of_action=False)
    policy.generate([STEP0], params)
    with torch.no_grad():  # an optimizer step's in-place update
        for w in model.parameters():
            w.mul_(1.5)
    got = policy.generate([STEP1], params)[0]
    want = LocalPolicy(model, tok, prefix_cache_tokens=0).generate([STEP1], params)[0]
    assert policy.reused == 0 and got.token_ids == want.token_ids
    assert max(abs(u - v) for u, v in zip(got.logprobs, want.logprobs, strict=True)) < 1e-4


def test_the_prefix_cache_keeps_to_its_token_budget(tiny):
    model, tok = tiny
    n0 = len(tok(STEP0, add_special_tokens=False)["input_ids"])
    policy = LocalPolicy(model, tok, prefix_cache_tokens=n0 + 5)
    params = SamplingParams(max_new_tokens=2, end_of_action=False)
    policy.generate([STEP0], params)
    policy.generate(["Task: something else entirely"], params)  # pushes STEP0 out: over the budget
    assert sum(len(k) for k in policy._prefixes) <= n0 + 5
    policy.generate([STEP1], params)
    assert policy.reused == 0
    with pytest.raises(ValueError, match="prefix_cache_tokens"):
        LocalPolicy(model, tok, prefix_cache_tokens=-1)


def test_lookup_draft_continues_the_latest_earlier_occurrence():
    ctx = [5, 6, 7, 8, 1, 5, 6, 9, 2, 5, 6]
    assert lookup_draft(ctx, 2) == [9, 2]  # the 2-gram (5, 6) last occurred at 5; its sequel
    assert lookup_draft(ctx, 9) == [9, 2, 5, 6]  # as far as the context goes
    assert lookup_draft([1, 2, 3, 4, 2], 3) == [3, 4, 2]  # only the 1-gram (2) recurs
    assert lookup_draft([1, 2, 3, 4], 3) == [] and lookup_draft([7], 3) == []


def test_prompt_lookup_decoding_equals_greedy_in_fewer_forwards(tiny):
    """Drafts checked in one forward keep exactly the greedy tokens and log-probs, and the
    tiny model's repetitive greedy output lets them save forwards; sampled rows get no draft."""
    model, tok = tiny
    p = SamplingParams(max_new_tokens=24, end_of_action=False)
    prompts = PROMPTS + ["Task: a b c a b c a b c a b"]
    plain = LocalPolicy(model, tok, draft_tokens=0)
    drafting = LocalPolicy(model, tok, draft_tokens=4)
    a, b = plain.generate(prompts, p), drafting.generate(prompts, p)
    for x, y in zip(a, b, strict=True):
        assert x.token_ids == y.token_ids and x.finish_reason == y.finish_reason and x.text == y.text
        assert max(abs(u - v) for u, v in zip(x.logprobs, y.logprobs, strict=True)) < 1e-4
    assert drafting.forwards < plain.forwards
    scores = drafting.score(prompts, [g.token_ids for g in b])
    assert all(max(abs(u - v) for u, v in zip(g.logprobs, s, strict=True)) < 1e-4 for g, s in zip(b, scores, strict=True))
    assert 0 < drafting.accepted <= drafting.drafted


class ArbitraryDrafts(LocalPolicy):
    """Drafts that are partly right (the tiny model repeats its last token) and partly random."""

    def _draft(self, prompt, toks, p):
        rng = random.Random(len(toks) * 7919 + len(prompt))
        return [toks[-1]] * rng.randint(0, 2) + [rng.randrange(300) for _ in range(rng.randint(0, 3))]


def test_any_draft_leaves_greedy_decoding_unchanged(tiny):
    """Whatever is drafted, the rejected slots are hidden and the tokens stay the greedy ones."""
    model, tok = tiny
    p = SamplingParams(max_new_tokens=20, end_of_action=False)
    prompts = PROMPTS + ["Task: a b c a b c a b c a b"]
    plain = LocalPolicy(model, tok, draft_tokens=0).generate(prompts, p)
    odd = ArbitraryDrafts(model, tok)
    for x, y in zip(plain, odd.generate(prompts, p), strict=True):
        assert x.token_ids == y.token_ids
        assert max(abs(u - v) for u, v in zip(x.logprobs, y.logprobs, strict=True)) < 1e-4
    assert 0 < odd.accepted < odd.drafted


def test_sampled_rows_get_no_draft_beside_drafting_greedy_rows(tiny):
    """Sampling draws the same tokens with drafting on (its rows get no draft), also when greedy
    rows in the same batch draft and pad the sampled rows' slots."""
    model, tok = tiny
    prompts = PROMPTS + ["Task: a b c a b c a b c a b"]
    sampled = SamplingParams(temperature=1.0, max_new_tokens=8, end_of_action=False)
    greedy = SamplingParams(max_new_tokens=8, end_of_action=False)
    plain, drafting = LocalPolicy(model, tok, seed=2, draft_tokens=0), LocalPolicy(model, tok, seed=2, draft_tokens=4)
    assert [g.token_ids for g in plain.generate(prompts, sampled)] == [
        g.token_ids for g in drafting.generate(prompts, sampled)]  # fmt: skip
    assert drafting.drafted == 0
    mixed = [sampled, greedy, sampled, greedy]
    x, y = plain.generate(prompts, mixed), drafting.generate(prompts, mixed)
    assert [g.token_ids for g in x] == [g.token_ids for g in y] and drafting.drafted > 0


def test_kv_cache_matches_full_forward(policy):
    """Each greedy token is the argmax of a plain forward over prompt + tokens so far."""
    g = policy.generate([PROMPTS[1]], SamplingParams(max_new_tokens=6, end_of_action=False))[0]
    ids = policy.encode(PROMPTS[1])
    for tok, lp in zip(g.token_ids, g.logprobs, strict=True):
        with torch.no_grad():
            logits = policy.model(input_ids=torch.tensor([ids])).logits[0, -1].float()
        assert int(logits.argmax()) == tok
        assert abs(float(torch.log_softmax(logits, -1)[tok]) - lp) < 1e-4
        ids.append(tok)


def test_logprobs_equal_teacher_forced_scores(policy):
    gens = policy.generate(PROMPTS, SamplingParams(temperature=1.0, max_new_tokens=10, end_of_action=False))
    scores = policy.score(PROMPTS, [g.token_ids for g in gens])
    for g, s in zip(gens, scores, strict=True):
        assert len(s) == len(g.token_ids)
        assert max(abs(a - b) for a, b in zip(g.logprobs, s, strict=True)) < 1e-4


def test_sampling_reproducible_and_top_p_tiny_is_greedy(tiny):
    model, tok = tiny
    a = LocalPolicy(model, tok, seed=3).generate(PROMPTS, SamplingParams(temperature=1.5, max_new_tokens=8))
    b = LocalPolicy(model, tok, seed=3).generate(PROMPTS, SamplingParams(temperature=1.5, max_new_tokens=8))
    assert [g.token_ids for g in a] == [g.token_ids for g in b]
    greedy = LocalPolicy(model, tok).generate(PROMPTS, SamplingParams(max_new_tokens=8, end_of_action=False))
    nucleus = LocalPolicy(model, tok).generate(
        PROMPTS, SamplingParams(temperature=1.0, top_p=1e-6, max_new_tokens=8, end_of_action=False)
    )
    assert [g.token_ids for g in greedy] == [g.token_ids for g in nucleus]


def test_per_prompt_params_and_length_finish(policy):
    gens = policy.generate(PROMPTS[:2], [SamplingParams(max_new_tokens=3, end_of_action=False),
                                         SamplingParams(max_new_tokens=5, end_of_action=False)])  # fmt: skip
    assert [len(g.token_ids) for g in gens] == [3, 5] or any(g.finish_reason == "stop" for g in gens)
    with pytest.raises(ValueError, match="SamplingParams"):
        policy.generate(PROMPTS, [SamplingParams()])
    with pytest.raises(ValueError, match="top_p"):
        SamplingParams(top_p=0)


def test_stop_rules(policy):
    tok = policy.tokenizer
    end = tok.convert_tokens_to_ids("<|im_end|>")
    ids = tok('# Element: Cart\ndo(action="Click", element="1")', add_special_tokens=False).input_ids
    assert policy._check_stop(ids + [end], end, SamplingParams())[0] == "stop"
    assert policy._check_stop(ids + [end], end, SamplingParams())[1].endswith('element="1")')
    nl = tok("\n", add_special_tokens=False).input_ids
    reason, text = policy._check_stop(ids + nl, nl[-1], SamplingParams())
    assert reason == "stop" and text.endswith('element="1")\n')
    assert policy._check_stop(ids + nl, nl[-1], SamplingParams(end_of_action=False))[0] == ""
    assert policy._check_stop(ids, ids[-1], SamplingParams(stop=("Cart",)))[1] == "# Element: "


def test_micro_batches_bucket_by_length(tiny):
    model, tok = tiny
    pol = LocalPolicy(model, tok, max_batch_tokens=100, max_batch=3)
    batches = pol.micro_batches([10, 90, 20, 30, 15, 40])
    assert sorted(i for b in batches for i in b) == list(range(6))
    for b in batches:
        assert len(b) <= 3 and max([10, 90, 20, 30, 15, 40][i] for i in b) * len(b) <= 100 or len(b) == 1


def test_pack_right_masks_prompt_and_padding():
    ids, mask, labels = pack_right([[1, 2, 3, 4], [5, 6]], [2, 1], pad_id=0)
    assert ids.tolist() == [[1, 2, 3, 4], [5, 6, 0, 0]]
    assert mask.tolist() == [[1, 1, 1, 1], [1, 1, 0, 0]]
    assert labels.tolist() == [[-100, -100, 3, 4], [-100, 6, -100, -100]]

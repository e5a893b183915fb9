"""`webrl serve-model`: the real `openai` client over loopback, malformed requests, batching."""

import http.client
import json
import threading

import openai
import pytest

from webrl.agent.local_policy import LocalPolicy, SamplingParams
from webrl.agent.openai_policy import OpenAIPolicy
from webrl.agent.server import ModelServer, ServerLimits

PROMPTS = ["Task: open the cart", "Task: what is the price of the blue mug?"]


@pytest.fixture(scope="module")
def served(tiny):
    model, tok = tiny
    policy = LocalPolicy(model, tok)
    limits = ServerLimits(max_tokens=64, max_n=3, max_prompt_tokens=200, batch_wait_ms=400)
    server = ModelServer(policy, "tiny", port=0, limits=limits).start()
    yield server, policy
    server.close()


@pytest.fixture(scope="module")
def client(served):
    return openai.OpenAI(base_url=served[0].url, api_key="x", max_retries=0)


def _raw(server, body: bytes, path="/v1/completions", method="POST"):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    return resp.status, json.loads(resp.read())


def test_binds_loopback_and_lists_the_model(served, client):
    assert served[0].host == "127.0.0.1"
    models = client.models.list().data
    assert [m.id for m in models] == ["tiny"] and models[0].owned_by == "webrl"


def test_greedy_completions_match_local_policy(served, client):
    _, policy = served
    resp = client.completions.create(model="tiny", prompt=PROMPTS, max_tokens=10, temperature=0, logprobs=1)
    local = policy.generate(PROMPTS, SamplingParams(max_new_tokens=10, end_of_action=False))
    assert [c.text for c in sorted(resp.choices, key=lambda c: c.index)] == [g.text for g in local]
    assert resp.choices[0].logprobs.token_logprobs == pytest.approx(local[0].logprobs, abs=1e-5)
    assert resp.usage.completion_tokens == sum(len(g.token_ids) for g in local)


def test_openai_policy_equals_local_policy(served):
    server, policy = served
    remote = OpenAIPolicy(server.url, tokenizer=policy.tokenizer)
    assert remote.model == "tiny" and remote.ours
    p = SamplingParams(max_new_tokens=12)
    for a, b in zip(remote.generate(PROMPTS, p), policy.generate(PROMPTS, p), strict=True):
        assert (a.text, a.token_ids, a.finish_reason) == (b.text, b.token_ids, b.finish_reason)
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)
    # rows that sample differently (a seed each) go as concurrent requests; each gets its own seed
    seeded = [SamplingParams(temperature=1.0, max_new_tokens=12, seed=s) for s in (4, 9)]
    for a, b in zip(remote.generate(PROMPTS[:2], seeded), policy.generate(PROMPTS[:2], seeded), strict=True):
        assert (a.text, a.token_ids) == (b.text, b.token_ids)
    assert remote.generate([], p) == []


def test_echo_and_token_id_prompts(served, client):
    """`echo`: the prompt's text and log-probs come first (the first token's null), as vLLM does;
    a prompt given as token ids generates what its text does."""
    _, policy = served
    ids = policy.encode(PROMPTS[0])
    resp = client.completions.create(model="tiny", prompt=PROMPTS[0], max_tokens=3, temperature=0, logprobs=1, echo=True)
    c = resp.choices[0]
    plain = policy.generate([PROMPTS[0]], SamplingParams(max_new_tokens=3, end_of_action=False))[0]
    assert c.text == PROMPTS[0] + plain.text
    lp = c.logprobs.token_logprobs
    assert lp[0] is None and len(lp) == len(ids) + len(plain.token_ids)
    assert lp[1 : len(ids)] == pytest.approx(policy.score([ids[:1]], [ids[1:]])[0], abs=1e-4)
    assert lp[len(ids) :] == pytest.approx(plain.logprobs, abs=1e-4)
    assert c.logprobs.top_logprobs[0] is None
    by_ids = client.completions.create(model="tiny", prompt=[ids, ids], max_tokens=3, temperature=0)
    assert [x.text for x in by_ids.choices] == [plain.text, plain.text] and by_ids.usage.prompt_tokens == 2 * len(ids)


def test_openai_policy_scores_like_local_policy(served):
    """Teacher forcing over the endpoint (`OpenAIPolicy.score`: echo with token-id prompts)."""
    server, policy = served
    remote = OpenAIPolicy(server.url, tokenizer=policy.tokenizer)
    actions = ['do(action="Click", element="4")', 'exit(message="$3")']
    got, want = remote.score(PROMPTS, actions), policy.score(PROMPTS, actions)
    assert [len(x) for x in got] == [len(x) for x in want] == [len(policy.encode(a)) for a in actions]
    for a, b in zip(got, want, strict=True):
        assert a == pytest.approx(b, abs=1e-4)
    with pytest.raises(ValueError, match="2 prompts"):
        remote.score(PROMPTS, actions[:1])
    assert remote.encode(PROMPTS[1]) == policy.encode(PROMPTS[1])  # what `eval-demos --fit` counts tokens with


def test_n_returns_n_choices(client):
    resp = client.completions.create(model="tiny", prompt="Task: x", max_tokens=4, temperature=1.0, n=3)
    assert sorted(c.index for c in resp.choices) == [0, 1, 2]


def test_a_seed_repeats_the_samples_whatever_shares_the_batch(served, client):
    """`seed`: the same request gives the same samples, alone or batched with other work; its n
    choices differ from each other; another seed gives other samples."""
    _, policy = served
    ask = dict(model="tiny", prompt="Task: x", max_tokens=12, temperature=1.0, n=2, logprobs=1)
    a = sorted(client.completions.create(**ask, seed=7).choices, key=lambda c: c.index)
    policy.generate(PROMPTS, SamplingParams(temperature=1.0, max_new_tokens=5))  # moves the shared generator
    results: list = []
    threads = [threading.Thread(target=lambda kw=kw: results.append((kw, client.completions.create(**kw))))
               for kw in ({**ask, "seed": 7}, {**ask, "prompt": PROMPTS, "n": 1})]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    b = sorted(next(r for kw, r in results if kw.get("seed") == 7).choices, key=lambda c: c.index)
    assert [c.text for c in a] == [c.text for c in b] and a[0].logprobs.tokens == b[0].logprobs.tokens
    assert a[0].logprobs.tokens != a[1].logprobs.tokens  # choice i samples with seed + i
    other = sorted(client.completions.create(**ask, seed=8).choices, key=lambda c: c.index)
    assert [c.logprobs.tokens for c in other] != [c.logprobs.tokens for c in a]
    local = policy.generate(["Task: x"], SamplingParams(temperature=1.0, max_new_tokens=12, end_of_action=False, seed=7))
    assert local[0].text == a[0].text  # the row's own generator: the server adds nothing


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"model": "tiny", "prompt": "x", "max_tokens": 10_000}, "max_tokens"),
        ({"model": "tiny", "prompt": "x", "n": 50}, "n"),
        ({"model": "tiny", "prompt": "x", "temperature": "hot"}, "temperature"),
        ({"model": "tiny", "prompt": "x", "max_tokens": 2.5}, "max_tokens"),
        ({"model": "tiny", "prompt": 42}, "prompt"),
        ({"model": "tiny", "prompt": []}, "prompt"),
        ({"model": "tiny", "prompt": "x", "stream": True}, "stream"),
        ({"model": "tiny", "prompt": "x", "stop": [1, 2]}, "stop"),
        ({"model": "tiny", "prompt": "x", "bogus": 1}, "bogus"),
        ({"prompt": "x"}, "model"),
        ({"model": "tiny", "prompt": "word " * 500}, "prompt"),  # too long: over max_prompt_tokens
        ({"model": "tiny", "prompt": [5, -2]}, "prompt"),  # token ids: negative,
        ({"model": "tiny", "prompt": [[5, 6], []]}, "prompt"),  # an empty one,
        ({"model": "tiny", "prompt": [10**6]}, "prompt"),  # past the vocabulary
        ({"model": "tiny", "prompt": [5, "x"]}, "prompt"),
    ],
)
def test_malformed_requests_get_clear_400s(served, body, param):
    status, data = _raw(served[0], json.dumps(body).encode())
    assert status == 400
    assert data["error"]["param"] == param and data["error"]["type"] == "invalid_request_error"
    assert data["error"]["message"]


def test_not_json_wrong_model_and_unknown_route(served, client):
    status, data = _raw(served[0], b"{not json")
    assert status == 400 and "not valid JSON" in data["error"]["message"]
    status, data = _raw(served[0], b"[1, 2]")
    assert status == 400 and "JSON object" in data["error"]["message"]
    for hostile in (b'{"max_tokens": ' + b"9" * 5000 + b"}", b"[" * 100_000 + b"]" * 100_000):
        status, data = _raw(served[0], hostile)  # too many digits for int(); nesting past the recursion limit
        assert status == 400 and "not valid JSON" in data["error"]["message"]
    with pytest.raises(openai.NotFoundError):
        client.completions.create(model="other", prompt="x", max_tokens=2)
    with pytest.raises(openai.BadRequestError):
        client.completions.create(model="tiny", prompt="x", max_tokens=0)
    status, _ = _raw(served[0], b"", path="/v1/chat/nothing", method="GET")
    assert status == 404
    # the server is still up after all that
    assert client.completions.create(model="tiny", prompt="x", max_tokens=2).choices


def test_two_concurrent_clients_are_batched(served):
    server, _ = served
    before = server.app.batcher.batches
    results = []

    def call(prompt):
        c = openai.OpenAI(base_url=server.url, api_key="x", max_retries=0)
        results.append(c.completions.create(model="tiny", prompt=prompt, max_tokens=4, temperature=0))

    threads = [threading.Thread(target=call, args=(p,)) for p in PROMPTS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2
    assert server.app.batcher.batches == before + 1  # one generate call served both requests
    assert server.app.batcher.largest >= 2


def test_a_failing_request_does_not_fail_its_batch_mates(tiny):
    from webrl.agent.server import Batcher

    model, tok = tiny

    class Fragile(LocalPolicy):  # fails any generate call that holds the poisoned prompt
        def generate(self, prompts, params=None):
            if "BOOM" in prompts:
                raise RuntimeError("out of memory (simulated)")
            return super().generate(prompts, params)

    batcher = Batcher(Fragile(model, tok), max_batch=8, wait_ms=300)
    p = [SamplingParams(max_new_tokens=3)]
    good, bad = batcher.submit(PROMPTS[:1], p), batcher.submit(["BOOM"], p)
    assert len(good.result(timeout=60)) == 1
    with pytest.raises(RuntimeError, match="simulated"):
        bad.result(timeout=60)
    assert batcher.largest == 2  # they were batched together, then split on the failure
    batcher.close()

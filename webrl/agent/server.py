"""`webrl serve-model PATH`: an OpenAI-compatible completions server for a local checkpoint.

Endpoints: `GET /v1/models`, `POST /v1/completions` (fields: model, prompt (a string, a
list of strings, a list of token ids, or a list of such lists), max_tokens, temperature,
top_p, n, stop, logprobs, echo, stream=false, seed, user; extensions `stop_at_action` and
`return_tokens_as_token_ids`), `GET /health`.

`echo`: the text is the prompt followed by the completion, and with `logprobs` the
tokens and log-probs cover the prompt too, the first prompt token's log-prob null (the
convention vLLM follows): with token-id prompts and `max_tokens=1` this scores given
text under the model (`OpenAIPolicy.score`). `seed`: choice i of the request (its
prompts times n, in order) samples with seed + i on a generator of its own, so the
same request gives the same samples whatever else shares its batch.

Concurrent requests are batched: a worker thread takes every request waiting
(up to `max_batch` prompts, after at most `batch_wait_ms`) and runs them as one
`LocalPolicy.generate` call, so several rollout workers share one model. Requests
are validated strictly (400 with an OpenAI-style error body naming the field),
capped (`max_tokens`, `n`, prompts per request, prompt tokens, body size), and a
failure inside generation answers 500 without stopping the server. Binds
127.0.0.1 unless told otherwise. `logprobs` returns the chosen tokens' log-probs;
`top_logprobs` holds only the chosen token.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from concurrent.futures import Future
from dataclasses import dataclass, field, replace

from webrl.agent.local_policy import LocalPolicy, SamplingParams

KNOWN_FIELDS = {
    "model", "prompt", "max_tokens", "temperature", "top_p", "n", "stop", "logprobs", "echo", "stream",
    "seed", "user", "presence_penalty", "frequency_penalty", "best_of", "logit_bias", "suffix",
    "stop_at_action", "return_tokens_as_token_ids",
}  # fmt: skip


@dataclass(frozen=True)
class ServerLimits:
    """Caps on what one request may ask for."""

    max_tokens: int = field(default=512, metadata={"help": "largest max_tokens accepted"})
    max_n: int = field(default=8, metadata={"help": "largest n accepted"})
    max_prompts: int = field(default=64, metadata={"help": "prompts per request"})
    max_prompt_tokens: int = field(default=4096, metadata={"help": "tokens in one prompt"})
    max_body_bytes: int = field(default=8 << 20, metadata={"help": "request body size"})
    max_batch: int = field(default=64, metadata={"help": "prompts generated together across requests"})
    batch_wait_ms: float = field(default=10.0, metadata={"help": "how long the batcher waits for more requests"})


class RequestError(ValueError):
    def __init__(self, message: str, param: str | None = None, status: int = 400, code: str | None = None):
        super().__init__(message)
        self.param, self.status, self.code = param, status, code


def _error(message: str, param: str | None = None, status: int = 400, code: str | None = None, kind: str = "invalid_request_error"):
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return json.dumps(body), status, {"Content-Type": "application/json"}


def _number(body: dict, key: str, default, lo: float, hi: float, integer: bool = False):
    v = body.get(key, default)
    if v is None:
        return default
    ok = isinstance(v, int) if integer else isinstance(v, int | float)
    if isinstance(v, bool) or not ok:
        raise RequestError(f"{key} must be {'an integer' if integer else 'a number'}, got {json.dumps(v)[:40]}", key)
    if not lo <= v <= hi:
        raise RequestError(f"{key} must be between {lo} and {hi}, got {v}", key)
    return v


def _bool(body: dict, key: str, default: bool) -> bool:
    v = body.get(key, default)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise RequestError(f"{key} must be true or false", key)
    return v


def _is_id(t) -> bool:
    return isinstance(t, int) and not isinstance(t, bool) and t >= 0


@dataclass
class _Job:
    prompts: list[str]
    params: list[SamplingParams]
    future: Future


class Batcher:
    """Collects concurrent jobs and runs them through one `generate` call."""

    def __init__(self, policy: LocalPolicy, max_batch: int, wait_ms: float):
        self.policy, self.max_batch, self.wait = policy, max_batch, wait_ms / 1000
        self.q: queue.Queue[_Job | None] = queue.Queue()
        self.lock = threading.Lock()  # one model call at a time: generation here, scoring (`score`) elsewhere
        self.batches = 0  # generate calls made
        self.largest = 0  # most requests served by one call
        self._thread = threading.Thread(target=self._loop, daemon=True, name="webrl-batcher")
        self._thread.start()

    def submit(self, prompts: list[str], params: list[SamplingParams]) -> Future:
        fut: Future = Future()
        self.q.put(_Job(prompts, params, fut))
        return fut

    def score(self, prompts: list[list[int]], completions: list[list[int]]) -> list[list[float]]:
        """`LocalPolicy.score`, between the batcher's generate calls."""
        with self.lock:
            return self.policy.score(prompts, completions)

    def close(self) -> None:
        self.q.put(None)
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=60)  # the generate in flight finishes before the interpreter may exit

    def _loop(self) -> None:
        while True:
            job = self.q.get()
            if job is None:
                return
            jobs = [job]
            size = len(job.prompts)
            deadline = time.monotonic() + self.wait
            while size < self.max_batch:
                try:
                    nxt = self.q.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if nxt is None:
                    self.q.put(None)
                    break
                jobs.append(nxt)
                size += len(nxt.prompts)
            self._run(jobs)

    def _run(self, jobs: list[_Job]) -> None:
        prompts = [p for j in jobs for p in j.prompts]
        params = [p for j in jobs for p in j.params]
        self.batches += 1
        self.largest = max(self.largest, len(jobs))
        try:
            with self.lock:
                gens = self.policy.generate(prompts, params)
        except Exception as e:  # the server stays up; one bad request must not fail its batch-mates
            if len(jobs) == 1:
                jobs[0].future.set_exception(e)
            else:
                for j in jobs:  # each on its own: only the request that fails alone gets the error
                    self._run([j])
            return
        k = 0
        for j in jobs:
            j.future.set_result(gens[k : k + len(j.prompts)])
            k += len(j.prompts)


def parse_request(body: object, model_name: str, limits: ServerLimits) -> tuple[list[str], SamplingParams, dict]:
    """Validate a /v1/completions body -> (prompts, params, options); raises RequestError."""
    if not isinstance(body, dict):
        raise RequestError("request body must be a JSON object")
    unknown = sorted(set(body) - KNOWN_FIELDS)
    if unknown:
        raise RequestError(f"unknown field(s): {', '.join(unknown)}", unknown[0])
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError("model is required (a string; see GET /v1/models)", "model")
    if model != model_name:
        raise RequestError(f"model {model!r} is not served here; this server serves {model_name!r}", "model", 404, "model_not_found")
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        prompts = [prompt]
    elif isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        prompts = list(prompt)
    elif isinstance(prompt, list) and prompt and all(_is_id(t) for t in prompt):
        prompts = [list(prompt)]
    elif isinstance(prompt, list) and prompt and all(isinstance(p, list) and all(_is_id(t) for t in p) for p in prompt):
        prompts = [list(p) for p in prompt]
    else:
        raise RequestError("prompt must be a non-empty string, a non-empty list of strings, a list of token ids "
                           "or a list of such lists", "prompt")  # fmt: skip
    if len(prompts) > limits.max_prompts:
        raise RequestError(f"at most {limits.max_prompts} prompts per request, got {len(prompts)}", "prompt")
    if any(not p for p in prompts):
        raise RequestError("prompts must not be empty strings", "prompt")
    max_tokens = _number(body, "max_tokens", 16, 1, limits.max_tokens, integer=True)
    temperature = _number(body, "temperature", 1.0, 0.0, 2.0)
    top_p = _number(body, "top_p", 1.0, 1e-6, 1.0)
    n = _number(body, "n", 1, 1, limits.max_n, integer=True)
    logprobs = _number(body, "logprobs", None, 0, 5, integer=True)
    seed = _number(body, "seed", None, -(2**63), 2**63 - 1, integer=True)
    for key in ("presence_penalty", "frequency_penalty"):
        if _number(body, key, 0.0, -2.0, 2.0) != 0:
            raise RequestError(f"{key} is not supported here (must be 0)", key)
    if _number(body, "best_of", 1, 1, limits.max_n, integer=True) not in (1, n):
        raise RequestError("best_of is not supported here (leave it unset)", "best_of")
    if body.get("logit_bias"):
        raise RequestError("logit_bias is not supported here", "logit_bias")
    if body.get("suffix") is not None:
        raise RequestError("suffix is not supported here", "suffix")
    if body.get("user") is not None and not isinstance(body["user"], str):
        raise RequestError("user must be a string", "user")
    if _bool(body, "stream", False):
        raise RequestError("stream is not supported here; send stream=false", "stream")
    stop = body.get("stop")
    if stop is None:
        stops: tuple[str, ...] = ()
    elif isinstance(stop, str):
        stops = (stop,)
    elif isinstance(stop, list) and len(stop) <= 4 and all(isinstance(s, str) for s in stop):
        stops = tuple(stop)
    else:
        raise RequestError("stop must be a string or a list of at most 4 strings", "stop")
    params = SamplingParams(temperature=float(temperature), top_p=float(top_p), max_new_tokens=int(max_tokens),
                            stop=stops, end_of_action=_bool(body, "stop_at_action", False))  # fmt: skip
    options = {"n": n, "logprobs": logprobs, "token_ids": _bool(body, "return_tokens_as_token_ids", False),
               "seed": None if seed is None else int(seed), "echo": _bool(body, "echo", False)}  # fmt: skip
    return prompts, params, options


def create_app(policy: LocalPolicy, model_name: str, limits: ServerLimits | None = None):
    """The Flask app (and its batcher as `app.batcher`)."""
    from flask import Flask, request

    limits = limits or ServerLimits()
    app = Flask("webrl-serve-model")
    app.config["MAX_CONTENT_LENGTH"] = limits.max_body_bytes
    batcher = Batcher(policy, limits.max_batch, limits.batch_wait_ms)
    app.batcher = batcher  # type: ignore[attr-defined]
    created = int(time.time())
    tok = policy.tokenizer

    @app.get("/health")
    def health():
        return {"status": "ok", "batches": batcher.batches, "largest_batch_requests": batcher.largest}

    @app.get("/v1/models")
    def models():
        return {"object": "list", "data": [{"id": model_name, "object": "model", "created": created,
                                            "owned_by": "webrl", "max_model_len": limits.max_prompt_tokens}]}  # fmt: skip

    @app.post("/v1/completions")
    def completions():
        raw = request.get_data(cache=False)
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError) as e:  # ValueError: JSONDecodeError, huge ints
            return _error(f"request body is not valid JSON: {str(e)[:200]}")
        try:
            prompts, params, opts = parse_request(body, model_name, limits)
            ids = [tok(p, add_special_tokens=False)["input_ids"] if isinstance(p, str) else p for p in prompts]
            counts = [len(x) for x in ids]
            vocab = len(tok)
            for i, x in enumerate(ids):
                if any(t >= vocab for t in x):
                    raise RequestError(f"prompt {i} holds a token id >= the vocabulary size {vocab}", "prompt")
            for i, c in enumerate(counts):
                if c > limits.max_prompt_tokens:
                    raise RequestError(f"prompt {i} is {c} tokens; this server accepts at most {limits.max_prompt_tokens}", "prompt")
        except RequestError as e:
            return _error(str(e), e.param, e.status, e.code)
        expanded = [p for p in prompts for _ in range(opts["n"])]
        try:
            if opts["seed"] is None:
                rows = [params] * len(expanded)
            else:  # choice i samples with seed + i: repeatable, and the n choices differ
                rows = [replace(params, seed=opts["seed"] + i) for i in range(len(expanded))]
            gens = batcher.submit(expanded, rows).result()
        except Exception as e:
            return _error(f"generation failed: {type(e).__name__}: {e}", status=500, kind="server_error")
        echoed: list[list[float | None]] = [[] for _ in prompts]  # each prompt's own tokens' log-probs
        if opts["echo"] and opts["logprobs"] is not None:
            try:
                lps = batcher.score([x[:1] for x in ids], [x[1:] for x in ids])
            except Exception as e:
                return _error(f"scoring the prompt failed: {type(e).__name__}: {e}", status=500, kind="server_error")
            echoed = [[None, *lp] for lp in lps]
        choices = []
        for i, g in enumerate(gens):
            k = i // opts["n"]  # the prompt this choice answers
            lp, text = None, g.text
            if opts["echo"]:
                text = (prompts[k] if isinstance(prompts[k], str) else tok.decode(prompts[k])) + g.text
            if opts["logprobs"] is not None:
                token_ids = (ids[k] if opts["echo"] else []) + g.token_ids
                toks = [f"token_id:{t}" if opts["token_ids"] else tok.decode([t]) for t in token_ids]
                values = (echoed[k] if opts["echo"] else []) + g.logprobs
                lp = {"tokens": toks, "token_logprobs": values, "text_offset": None,
                      "top_logprobs": [None if v is None else {t: v} for t, v in zip(toks, values, strict=True)]}  # fmt: skip
            choices.append({"index": i, "text": text, "logprobs": lp, "finish_reason": g.finish_reason})
        completion_tokens = sum(len(g.token_ids) for g in gens)
        prompt_tokens = sum(counts)
        return {
            "id": f"cmpl-{uuid.uuid4().hex[:24]}", "object": "text_completion", "created": int(time.time()),
            "model": model_name, "choices": choices,
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }  # fmt: skip

    @app.errorhandler(404)
    def not_found(e):
        return _error(f"no route {request.method} {request.path}; see /v1/models and /v1/completions", status=404, code="not_found")

    @app.errorhandler(405)
    def bad_method(e):
        return _error(f"method {request.method} not allowed on {request.path}", status=405)

    @app.errorhandler(413)
    def too_large(e):
        return _error(f"request body over {limits.max_body_bytes} bytes", status=413)

    @app.errorhandler(Exception)
    def crash(e):
        return _error(f"internal error: {type(e).__name__}", status=500, kind="server_error")

    return app


class ModelServer:
    """The app on a threaded WSGI server; `start()` runs it in the background (tests), `serve_forever()` blocks."""

    def __init__(self, policy: LocalPolicy, model_name: str, host: str = "127.0.0.1", port: int = 8000,
                 limits: ServerLimits | None = None, access_log: bool = True):  # fmt: skip
        from werkzeug.serving import WSGIRequestHandler, make_server

        class Quiet(WSGIRequestHandler):
            def log_request(self, *args, **kwargs) -> None:  # errors are still logged
                pass

        self.app = create_app(policy, model_name, limits)
        self.server = make_server(host, port, self.app, threaded=True, request_handler=None if access_log else Quiet)
        self.host, self.port = host, self.server.server_port
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> ModelServer:
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True, name="webrl-serve-model")
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.server.serve_forever()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.app.batcher.close()  # type: ignore[attr-defined]

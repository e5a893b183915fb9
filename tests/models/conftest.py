import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")


@pytest.fixture(scope="session")
def tiny():
    """(model, tokenizer) of the cpu-tiny preset: a from-scratch 2-layer Llama + LoRA."""
    from webrl.models.build import build
    from webrl.models.config import preset

    return build(preset("cpu-tiny"))

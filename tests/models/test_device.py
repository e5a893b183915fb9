"""Device choice: `WEBRL_DEVICE`, else the GPU when torch sees one, else the CPU."""

import pytest

torch = pytest.importorskip("torch")

from webrl.models.device import bf16_autocast, default_device, module_device  # noqa: E402


def test_default_device_and_override(monkeypatch):
    monkeypatch.delenv("WEBRL_DEVICE", raising=False)
    assert default_device().type == ("cuda" if torch.cuda.is_available() else "cpu")
    monkeypatch.setenv("WEBRL_DEVICE", "cpu")
    assert default_device() == torch.device("cpu")
    monkeypatch.setenv("WEBRL_DEVICE", "gpu0")
    with pytest.raises(ValueError, match="WEBRL_DEVICE='gpu0' is not a torch device"):
        default_device()
    if not torch.cuda.is_available():
        monkeypatch.setenv("WEBRL_DEVICE", "cuda")
        with pytest.raises(ValueError, match="no CUDA device"):
            default_device()


def test_module_device_and_autocast():
    assert module_device(torch.nn.Linear(2, 2)) == torch.device("cpu")
    assert module_device(torch.nn.ReLU()) == torch.device("cpu")  # no parameters
    lin = torch.nn.Linear(4, 4)
    with bf16_autocast(torch.device("cpu")):
        assert lin(torch.ones(1, 4)).dtype == torch.bfloat16
    with bf16_autocast(torch.device("cpu"), enabled=False):
        assert lin(torch.ones(1, 4)).dtype == torch.float32

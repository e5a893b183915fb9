"""Models: configs and presets, tokenizer/model builders (GGUF, local tiny, any HF dir), LoRA adapters."""

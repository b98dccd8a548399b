"""PyTorch side: the linear self-attention layer, the trainer, the weight cache, the CLI."""

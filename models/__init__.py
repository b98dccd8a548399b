"""PyTorch side: the linear self-attention layer, its training (config, sampler, features, result, loop), the weight cache, the CLI.

Modules: ``attention`` (the layer and its tokens), ``config`` (TrainConfig, key, lr
schedule, stream seeds), ``sampler`` (TorchLDSSampler), ``features`` (effective form of
the loss), ``result`` (TrainResult), ``trainer`` (the loop, ``train``; re-exports the
names above), ``twins`` (noise-free twins: the protocol on the exact population loss),
``construction`` (the depth construction through the stacks' forward pass),
``fingerprint`` (the training code's fingerprint in the cache key), ``cache`` (weights on
disk by key), ``cli`` (``ldsicl``: the parser and ``main``), ``commands`` (what each
subcommand does), ``runtime`` (device and threads), ``files`` (atomic writes).
"""

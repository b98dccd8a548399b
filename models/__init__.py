"""PyTorch side: the linear self-attention layer, its training (config, sampler, features, result, loop), the weight cache, the CLI.

Modules: ``attention`` (the layer and its tokens), ``config`` (TrainConfig, key, lr
schedule, stream seeds), ``sampler`` (TorchLDSSampler), ``features`` (effective form of
the loss), ``result`` (TrainResult), ``trainer`` (the loop, ``train``; re-exports the
names above), ``cache`` (weights on disk by key), ``cli`` (``ldsicl``), ``runtime``
(device and threads), ``files`` (atomic writes).
"""

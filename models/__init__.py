"""PyTorch side: the linear self-attention layer, its training (config, sampler, features, result, loop) and the weight cache.

Modules: ``attention`` (the layer, the stack and their tokens), ``config`` (TrainConfig,
key, lr schedule, stream seeds), ``sampler`` (TorchLDSSampler), ``features`` (effective
form of the loss), ``result`` (TrainResult), ``batches`` (a step's shards on their own random streams),
``trainer`` (the loop, ``train``, resource checks), ``twins`` (noise-free twins: the protocol on the exact population loss),
``construction`` (the depth construction through the stacks' forward pass),
``fingerprint`` (the training code's fingerprint in the cache key), ``cache`` (weights on
disk by key), ``runtime`` (device and threads), ``kernels`` (the CPU kernels pinned for
training), ``files`` (atomic writes).  The command line (``ldsicl``) sits above everything
it calls, in claims/cli/main.py.

Importing the package pins torch's and MKL's CPU kernels (models/kernels.py) before any
torch operation can run, where the environment does not choose them itself: the same
configuration then trains to the same bits on Intel and AMD CPUs.
"""
from models.kernels import pin_cpu_kernels as _pin_cpu_kernels

_pin_cpu_kernels()

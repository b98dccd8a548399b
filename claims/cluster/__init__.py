"""Running the claims beyond one process: executors, cluster training, sweeps over grids of points.

Modules:

* ``executor`` -- one executor interface (the standard library's ``concurrent.futures``
  shape): a local process pool by default, a ``dask.distributed`` cluster with
  ``--scheduler``.
* ``training`` -- every trained run of a profile (at a point) trained on an executor:
  workers train and return weights with their code's fingerprint; the client refuses a
  fingerprint unlike its own and stores the rest in the weight cache under its lock.
* ``grid`` -- a grid of points of the family's parameters (``--grid``), validated up front.
* ``sweepfile`` -- the sweep file (``sweep.json``) as typed objects, written and read back.
* ``sweep`` -- ``ldsicl sweep``: the suite's own run at each cell of a grid, gathered into one
  sweep file; resumable.
"""

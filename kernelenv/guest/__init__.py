"""The kernel harness that runs INSIDE the sandbox (``python3`` with the ``torch`` toolchain).

The package is the sandboxed program: shipped as one file (``Job.source``,
``perfalign.sandbox.shipping``) with the size rules and the output comparison it shares with
the host (``kernelenv/sizes.py``) and the measurement protocol (``measure/timing_stats.py``).
``main`` starts the driver (``driver``, its calls in ``calls``, its end of each server in
``channel``) or a model server (``server``); ``calibrate`` picks a problem's scale; ``shared``
holds what both sides use.

Two processes per sandboxed execution:

- the **driver** (the file run with no argument) reads its job from stdin: the problem's source, the
  secret seed, a nonce, and (for a candidate) the candidate's source. It never runs candidate
  code. It makes itself non-dumpable (the candidate cannot ptrace it, read its memory or
  environment, or take its file descriptors), draws every trial's inputs from the secret seed,
  computes the reference in its own memory, and measures each call of the model server from
  outside: CPU time = the sandbox cgroup's counter over the call window minus the driver's own
  CPU (every process and thread the candidate creates is charged), wall time from its own clock.
  It alone writes to stdout: one JSON report carrying the nonce.
- two **model servers** (``--child``), each with its own shared memory (a memfd): the
  reference's (the problem's ``Model``, eager; ``--trusted``: non-dumpable, so no other process
  can read or write its memory or take its fds) and the subject's (the candidate's ``ModelNew``,
  or ``torch.compile(Model)`` for the compile baseline). Each gets only init values, a weight
  seed and, per call, input tensors in shared memory, and copies its outputs there.

Timing is the one measurement protocol (``measure/timing_stats.py``, shipped with the guest):
the reference server is first timed alone (before any
candidate code exists: the machine's own noise), then the subject and the reference in
interleaved rounds, both on the same fresh inputs, in a fresh random order each round, until
the speedup's estimate (``rounds_estimate``: the medians', else the paired one) is precise to
the target (or the round / time cap). A round's
CPU: the reference server's process clock, and for the subject everything else the sandbox's
cgroup counted over the round minus the driver's own CPU (its children, its threads, and any
work it does between its calls, while the reference runs, are charged to it).

Per call the driver flushes the per-core caches, writes fresh inputs, asks for the call,
snapshots the output: inputs never exist before the window
opens and the output is judged as it was when the window closed. Outputs go to a region the
driver poisons before each call; inputs are compared with the driver's private copy afterwards.
"""

"""perfalign.measure: the measurement layer above the sandbox — how a candidate function is
timed against its baseline so that the number cannot be gamed.

probe / probe_cpp / cxxsig build the two translation units of a probe (the trusted driver, the
candidate); transcript holds the per-call fingerprints; harness runs interleaved rounds with the
noise gate and the shift check and turns them into a score. evaluation, grpo and the kernel
environment all measure through here; it imports only ``perfalign.sandbox`` and ``perfalign.common``.
"""

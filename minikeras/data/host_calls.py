"""Map functions that must run on the host, row by row, instead of being traced with ``jax.vmap``.

A map function over rows of numbers is traced once per batch (``_rows.batched_function``). An
object that computes on the host (a ``FeatureSpace``: lookups, hashing, strings) cannot run
under that trace. It says so in two ways: called directly as the map function it carries
``runs_on_host = True``, and called from inside another function (``lambda x, y: (fs(x), y)``)
it raises ``HostOnlyCall`` when it sees traced values; the pipeline then applies that map
function eagerly, row by row, as it does for rows holding strings.
"""


class HostOnlyCall(Exception):
    """Raised by an object that computes on the host when it is called on traced values."""


def marked_for_host(fns):
    """Whether one of the functions says it runs on the host (``runs_on_host = True``)."""
    return any(getattr(fn, "runs_on_host", False) for fn in fns)


def with_host_fallback(compiled, eager):
    """``compiled``, until a call raises ``HostOnlyCall``; from then on ``eager``."""
    chosen = [compiled]

    def run(batch):
        try:
            return chosen[0](batch)
        except HostOnlyCall:
            chosen[0] = eager
            return eager(batch)
    return run

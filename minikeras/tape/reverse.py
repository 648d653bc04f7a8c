"""The reverse loop: one walk over recorded steps, last to first, summing cotangents.

Both backward passes use it: the rule-by-rule one (``recording.Recording.backward``, over
the tape's records, keyed by object id) and the compiled one (``compiled.replay``, over a
plan's steps, keyed by slot number, traced into one XLA program).
"""


def reverse_accumulate(steps, seeds, keep, tracked, backward, add):
    """Runs ``steps`` backward from ``seeds``; returns {key: summed cotangent}.

    Args:
      steps: a sequence of ``(step, input_keys, output_keys)`` in execution order.
      seeds: ``(key, cotangent)`` pairs to start from (a key given twice is summed). The
        cotangent of a step's output is dropped once the step has run, unless the key is in
        ``keep``.
      keep: the keys whose gradients the caller wants back (the sources).
      tracked: the keys that may receive a gradient (values computed from watched ones);
        gradients for other inputs are not accumulated.
      backward: ``backward(step, cotangents)`` -> one input gradient (or None) per input key;
        ``cotangents`` has one entry per output, None where nothing flowed back.
      add: sums two cotangents (``jnp.add`` on arrays, ``mk.add`` when recorded).
    """
    grads = {}
    for key, seed in seeds:
        grads[key] = seed if key not in grads else add(grads[key], seed)
    for step, input_keys, output_keys in reversed(steps):
        if len(output_keys) == 1:
            key = output_keys[0]
            cotangent = grads.get(key)
            if cotangent is None:
                continue
            if key not in keep:
                del grads[key]
            cotangents = (cotangent,)
        else:
            cotangents = [grads.get(key) for key in output_keys]
            if all(c is None for c in cotangents):
                continue
            for key in output_keys:
                if key not in keep:
                    grads.pop(key, None)
        for key, g in zip(input_keys, backward(step, cotangents)):
            if g is None or key not in tracked:
                continue
            previous = grads.get(key)
            grads[key] = g if previous is None else add(previous, g)
    return grads

"""Donated state: a compiled step updates the Variables it writes in their own buffers.

Every compiled program minikeras runs with Variables (``mk.function``, ``fit``'s steps, the
``lax.scan`` of ``steps_per_execution``, ``mk.distribute``'s sharded step) takes the values of
the Variables it assigns as its first arguments and returns their new values. Donating those
arguments lets XLA write each new value into the old one's buffer: an optimizer's update (the
weights, both Adam moments, the iteration count) runs in place instead of first copying every
variable and moment into a fresh output buffer.

A donated buffer is gone after the call, so only a Variable's own array is donated, and only
when nothing else can read it (``Variable._array_to_donate``): the array was written by a
compiled program and no Python object but the Variable references it. A value handed out
(``v.value()``/``read_value()`` Tensors, ``jnp.asarray(v)``, a tape's record of a read, an
array given to ``assign``) makes the next step donate a copy instead, so what a user holds is
a snapshot that keeps its values, as in Keras. ``numpy()`` and ``get_weights()`` return NumPy
arrays, which stay valid either way.

A donating call deletes its inputs when it starts, so its results are the only copy of the
state: ``call_keeping_results`` makes sure they reach the Variables even when a
KeyboardInterrupt (Ctrl-C during ``fit``) is raised the moment the call returns.

``MINIKERAS_DONATE_STATE=0`` (read at import), or ``ENABLED = False`` before a program is
traced, turns donation off for the programs traced from then on (each keeps its choice,
``Program.donates``); the results are the same bits.
"""
import os

from minikeras.xla_cpu import compiler

ENABLED = os.environ.get("MINIKERAS_DONATE_STATE", "1") != "0"


def donated_arguments(count):
    """The ``donate_argnums`` of a program whose first ``count`` arguments are assigned state."""
    return tuple(range(count)) if ENABLED else ()


def assigned_arrays(variables, donates):
    """The values of the assigned ``variables`` to pass to a program: if it ``donates`` them,
    each Variable's own array where that is safe, else a copy (``Variable._array_to_donate``)."""
    if not donates:
        return [v._value for v in variables]
    return [v._array_to_donate() for v in variables]


def call_keeping_results(function, args, finish, keep_state):
    """``finish(function(*args))``, where ``keep_state(results)`` writes the new state back if
    an exception interrupts ``finish`` or arrives as ``function`` returns.

    Python raises a pending KeyboardInterrupt at the first bytecode after a call returns, which
    would drop the results of a call whose donated inputs are already gone (the Variables left
    holding deleted arrays): ``compiler.call_into`` makes the call and stores its results from
    C, with no bytecode in between. (``function`` is a ``jit`` result; any other callable is
    called as it is, and a Python frame of its own is a window left open.)"""
    box = []
    try:
        compiler.call_into(box, function, args)
        return finish(box[0])
    except BaseException:
        if box:
            keep_state(box[0])
        raise

"""The worker side of the protocol ``common.StepWorker`` drives: a contender in a process of its
own (another framework, with its default allocator) prints ``ready <description>`` and then
answers each command on its standard input with ``done <minor page faults during it>``:
``first`` runs the first call, ``run`` the timed work; ``quit`` or the end of input ends it.
Imports nothing but the standard library, so a TensorFlow or PyTorch worker loads nothing else.
"""
import resource
import sys


def minor_faults():
    """The process's minor page faults so far (``getrusage``)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def serve(description, first, run):
    """Announces ``description``, then calls ``first()`` or ``run()`` for each command until
    ``quit`` (each must return when its work is done)."""
    print(f"ready {description}", flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "quit":
            break
        before = minor_faults()
        if command == "first":
            first()
        elif command == "run":
            run()
        else:
            print(f"error unknown command {command!r}", flush=True)
            continue
        print(f"done {minor_faults() - before}", flush=True)

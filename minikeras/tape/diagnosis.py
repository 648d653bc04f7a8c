"""Explains why a gradient is None, for ``unconnected_gradients='raise'``, from a tape's
``Recording`` (its records, blocked ops and watched values)."""
from minikeras.ops.op import carries_gradient
from minikeras.tensor import Variable


def describe(source, index):
    if isinstance(source, Variable):
        return f"source {index}: mk.Variable '{source.name}' (shape {source.shape}, dtype {source.dtype.name})"
    return f"source {index}: mk.Tensor of shape {source.shape}, dtype {source.dtype.name}"


def explain_unconnected(recording, missing, targets):
    """A message naming each source in ``missing`` [(position in sources, source)] and why it has
    no gradient."""
    blockers = _first_blockers(recording)
    target_ids = [id(t) for t in targets]
    lines = []
    for index, source in missing:
        lines.append(f"  - {describe(source, index)}: {_reason(recording, source, blockers, target_ids)}")
    return "GradientTape.gradient found no gradient for:\n" + "\n".join(lines)


def _reason(recording, source, blockers, target_ids):
    if not carries_gradient(source.dtype):
        return (f"it has dtype {source.dtype.name}; only floating-point values carry gradients "
                "(cast it with mk.cast(x, mk.float32) before the computation)")
    if id(source) not in recording.tracked:
        return ("it was never watched by this tape (call tape.watch(x), or read a trainable mk.Variable "
                "inside the tape's `with` block)")
    reach = blockers.get(id(source), {})
    for target_id in target_ids:
        if target_id in reach:
            blocker = reach[target_id]
            if blocker is not None:
                return (f"the path to the target passes through `{blocker}`, which has no gradient "
                        "(it is not differentiable)")
    return "the target was not computed from it while this tape recorded"


def _first_blockers(recording):
    """{source id: {reachable id: name of the first non-differentiable op on the way, or None}}."""
    edges = [(r.inputs, r.outs, None) for r in recording.records]
    edges += [(inputs, outs, name) for name, inputs, outs in recording.blocked]
    result = {}
    for start in list(recording.watched):
        label = {start: None}
        changed = True
        while changed:
            changed = False
            for inputs, outs, name in edges:
                incoming = [label[id(x)] for x in inputs if id(x) in label]
                if not incoming:
                    continue
                if name is not None:
                    value = name              # this op blocks the gradient
                elif any(b is None for b in incoming):
                    value = None              # a clean path reaches it
                else:
                    value = next(b for b in incoming if b)  # only blocked paths: the first blocker
                for o in outs:
                    key = id(o)
                    if key not in label or (label[key] is not None and value is None):
                        label[key] = value
                        changed = True
        result[start] = label
    return result

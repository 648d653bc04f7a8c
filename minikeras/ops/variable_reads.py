"""``VariableReads``: a stand-in tape that sees which Variables a function reads.

It follows the tape protocol (``minikeras.tape``) and records nothing; ``custom_gradient``
and ``recompute_grad`` run the user's function with it as the only tape
(``_context.recording_with([reads])``) to learn the Variables whose gradients the function's
backward pass must produce.
"""


class VariableReads:
    """Collects the Variables read while it is the recording tape, in order of first read.

    Attributes:
      variables: {id(variable): variable}.
    """

    def __init__(self):
        self.variables = {}

    def read_variable(self, variable, out):
        self.variables.setdefault(id(variable), variable)

    def watch_accessed(self, variables):
        for variable in variables:
            self.variables.setdefault(id(variable), variable)

    def record(self, op, params, inputs, outs):
        pass

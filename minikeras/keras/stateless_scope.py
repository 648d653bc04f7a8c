"""``keras.StatelessScope``: run layer and model code without changing any Variable, as Keras 3's.

    with keras.StatelessScope(state_mapping=[(layer.kernel, new_kernel)]) as scope:
        y = layer(x)                     # computed with new_kernel
        counter.assign_add(1)            # collected, not applied
    scope.get_current_value(counter)     # the value it would have had

Inside the block (in this thread), reading a Variable of ``state_mapping`` gives the mapped
value; every assignment (``assign``, an optimizer's or a layer's update) is collected by the
scope and seen by later reads in the block, but no Variable's stored value changes. With
``collect_losses=True`` the losses layers add in the block go to ``scope.losses``, not to the
layers. The reads and writes go through ``_context``'s per-thread Variable values, the
mechanism ``mk.function`` traces use, so the same code runs eagerly and compiled.
"""
import contextlib

from minikeras import _context
from minikeras.tensor import Tensor, Variable, to_array


class StatelessScope:
    """A block in which Variable reads see ``state_mapping`` and writes are collected.

    Args:
      state_mapping: ``(variable, value)`` pairs (a list, or a dict ``{variable: value}``);
        each value is converted to the variable's dtype and must have its shape.
      collect_losses: when True, ``layer.add_loss`` in the block adds to ``scope.losses``.
      initialize_variables: Keras's switch for variables created in the block, which Keras
        defers; minikeras creates them initialized, so only True is accepted.
    """

    def __init__(self, state_mapping=None, collect_losses=False, initialize_variables=True):
        if not initialize_variables:
            raise ValueError("StatelessScope(initialize_variables=False) is not supported: minikeras initializes a "
                             "Variable when it is created, also inside a StatelessScope")
        pairs = state_mapping.items() if isinstance(state_mapping, dict) else (state_mapping or [])
        self.state_mapping = {}
        self._variables = {}
        for variable, value in pairs:
            if not isinstance(variable, Variable):
                raise ValueError("Invalid reference variable in StatelessScope: all keys in argument `mapping` must "
                                 f"be Variable instances. Received instead: {variable}")
            array = to_array(variable.value() if isinstance(value, Variable) else value, variable.dtype)
            if tuple(array.shape) != tuple(variable.shape):
                raise ValueError("Invalid variable value in StatelessScope: all values in argument `mapping` must be "
                                 "tensors with a shape that matches the corresponding variable shape. For variable "
                                 f"{variable!r}, received invalid value {value} with shape {tuple(array.shape)}.")
            self.state_mapping[id(variable)] = array
            self._variables[id(variable)] = variable
        self.collect_losses = collect_losses
        self.initialize_variables = initialize_variables
        self.losses = []
        self._updates = {}
        self._stack = None

    def __enter__(self):
        if self._stack is not None:
            raise RuntimeError("This StatelessScope is already entered; make a new one for another block")
        self._stack = contextlib.ExitStack()
        for key, array in self.state_mapping.items():
            self._stack.enter_context(_context.variable_seen_as(self._variables[key], array))
        self._stack.enter_context(_context.stateless(self))
        return self

    def __exit__(self, *exc):
        stack, self._stack = self._stack, None
        stack.close()
        return False

    def add_update(self, update):
        """Collects ``(variable, value)``: later reads in the block see ``value``."""
        variable, value = update
        key = id(variable)
        if key not in self.state_mapping and key not in self._updates and self._stack is not None:
            # seen as the written value from now until the block ends (then the previous is back)
            self._stack.enter_context(_context.variable_seen_as(variable, value))
        self._updates[key] = (variable, value)

    def add_loss(self, loss):
        """Collects a loss a layer added in the block (``collect_losses=True``)."""
        self.losses.append(loss)

    def get_current_value(self, variable):
        """The value ``variable`` has in this scope: its last collected update, else its mapped
        value, else None (the scope does not know it)."""
        key = id(variable)
        if key in self._updates:
            return Tensor(self._updates[key][1])
        if key in self.state_mapping:
            return Tensor(self.state_mapping[key])
        return None

    @property
    def updates(self):
        """The collected ``(variable, value)`` pairs, in the order of their first write."""
        return [(variable, Tensor(value)) for variable, value in self._updates.values()]


def get_stateless_scope():
    """The innermost StatelessScope entered in this thread, or None."""
    scopes = _context.call_state.stateless_scopes
    return scopes[-1] if scopes else None


def in_stateless_scope():
    """Whether this thread is inside a StatelessScope."""
    return bool(_context.call_state.stateless_scopes)

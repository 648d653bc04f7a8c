"""``keras.name_scope(name)``: a prefix for the paths of the Variables and layer weights created
inside the ``with`` block, as Keras 3's ``backend.name_scope``.

    with keras.name_scope("encoder"):
        v = keras.Variable(1.0, name="v")        # v.path == "encoder/v"
        dense = keras.layers.Dense(2)
        dense.build((None, 3))                   # dense.kernel.path == "encoder/dense/kernel"

Scopes nest ("outer/inner/v"); only ``path`` changes, never ``name`` ("v", "kernel"). As in
Keras 3, a layer opens a scope of its own name while it is built and called (``Layer.__call__``,
``Sequential.build``), so a sub-layer built there has its parent's prefix
(``sequential/dense/kernel``); a layer's own path is fixed where it first opens that scope (or
makes its first weight), whatever scope it was created in.
"""
from minikeras import _context


class name_scope:
    """Enters a sub-namespace for variable paths (``keras.name_scope``).

    Args:
      name: the scope's name (a string without ``/``).
      caller: optionally, the object opening the scope (a layer).
      deduplicate: when True and ``caller`` is the caller of the enclosing scope of the same
        name, the block adds no second level; a caller's ``_parent_path`` then overrides the
        parent path.
      override_parent: an absolute path replacing the enclosing scopes' path.
    """

    def __init__(self, name, caller=None, deduplicate=True, override_parent=None):
        if not isinstance(name, str) or "/" in name:
            raise ValueError("Argument `name` must be a string and cannot contain character `/`. "
                             f"Received: name={name}")
        self.name = name
        self.caller = caller
        self.deduplicate = deduplicate
        self.override_parent = override_parent
        if override_parent is None and deduplicate and getattr(caller, "_parent_path", None) is not None:
            self.override_parent = caller._parent_path
        self._pop_on_exit = False

    def __enter__(self):
        scopes = _context.call_state.name_scopes
        if self.deduplicate and scopes and self.caller is not None and self.caller is scopes[-1].caller \
                and self.name == scopes[-1].name:
            return self
        scopes.append(self)
        self._pop_on_exit = True
        return self

    def __exit__(self, *exc):
        if self._pop_on_exit:
            _context.call_state.name_scopes.pop()
            self._pop_on_exit = False
        return False


def current_path():
    """The path of the scopes entered in this thread ("" outside every scope)."""
    return _context.name_scope_path()

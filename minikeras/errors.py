"""``mk.errors``: TensorFlow's exception classes (``tf.errors``), with the same names and codes.

    try:
        mk.matmul(mk.ones((2, 3)), mk.ones((2, 3)))
    except mk.errors.InvalidArgumentError as e:
        print(e.message)   # Matrix size-incompatible: In[0]: [2,3], In[1]: [2,3] [Op:MatMul]

``OpError`` is the base class, as in TF, and takes TF's arguments ``(node_def, op, message)``.
Unlike TF, some classes also derive from the matching Python exception so that code written
against the Python one keeps working: ``InvalidArgumentError`` is a ``ValueError``,
``OutOfRangeError`` an ``IndexError`` (and TF's end of a sequence), ``NotFoundError`` a
``FileNotFoundError``, ``UnimplementedError`` a ``NotImplementedError`` and
``ResourceExhaustedError`` a ``MemoryError``.
"""

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """The base class of TensorFlow's operation errors.

    Args:
      node_def: TF's NodeDef of the failing op; None here (kept for TF's signature).
      op: the failing op (a name or None).
      message: what went wrong; ``str(error)`` is this message.
      error_code: one of this module's codes (``INVALID_ARGUMENT``...).
    """

    def __init__(self, node_def, op, message, error_code=UNKNOWN, *args):
        super().__init__(message, *args)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def message(self):
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        return self._node_def

    @property
    def error_code(self):
        return self._error_code

    def __str__(self):
        return self._message

    def __reduce__(self):
        return type(self), (self._node_def, self._op, self._message)


def _error_class(name, code, doc, *python_bases):
    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code, *args)

    return type(name, (OpError,) + python_bases, {"__init__": __init__, "__doc__": doc, "__module__": __name__})


CancelledError = _error_class("CancelledError", CANCELLED, "An operation or step was cancelled.")
UnknownError = _error_class("UnknownError", UNKNOWN, "An unknown error.")
InvalidArgumentError = _error_class(
    "InvalidArgumentError", INVALID_ARGUMENT,
    "An op received an invalid argument (wrong shape, out-of-range index...). Also a ValueError.", ValueError)
DeadlineExceededError = _error_class("DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired.")
NotFoundError = _error_class(
    "NotFoundError", NOT_FOUND, "A requested entity (a file, a checkpoint) was not found. Also a FileNotFoundError.",
    FileNotFoundError)
AlreadyExistsError = _error_class("AlreadyExistsError", ALREADY_EXISTS, "An entity to create already exists.")
PermissionDeniedError = _error_class("PermissionDeniedError", PERMISSION_DENIED, "The caller may not do this.")
UnauthenticatedError = _error_class("UnauthenticatedError", UNAUTHENTICATED, "The request has no valid credentials.")
ResourceExhaustedError = _error_class(
    "ResourceExhaustedError", RESOURCE_EXHAUSTED, "A resource (memory, disk) is exhausted. Also a MemoryError.",
    MemoryError)
FailedPreconditionError = _error_class(
    "FailedPreconditionError", FAILED_PRECONDITION,
    "The system is not in a state for this operation (an uninitialized Variable...).")
AbortedError = _error_class("AbortedError", ABORTED, "An operation was aborted.")
OutOfRangeError = _error_class(
    "OutOfRangeError", OUT_OF_RANGE, "An operation went past the valid range (the end of a sequence). Also an "
    "IndexError.", IndexError)
UnimplementedError = _error_class(
    "UnimplementedError", UNIMPLEMENTED, "An operation is not implemented. Also a NotImplementedError.",
    NotImplementedError)
InternalError = _error_class("InternalError", INTERNAL, "An internal invariant is broken.")
UnavailableError = _error_class("UnavailableError", UNAVAILABLE, "A runtime is unavailable.")
DataLossError = _error_class("DataLossError", DATA_LOSS, "Data were lost or corrupted (a truncated file...).")


def invalid_argument(op, message):
    """An ``InvalidArgumentError`` for ``op`` whose message ends with TF's ``[Op:<op>]``."""
    return InvalidArgumentError(None, op, f"{message} [Op:{op}]")

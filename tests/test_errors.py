"""mk.errors: TF's exception classes, codes and attributes, and the Python bases that keep
``except ValueError`` (and friends) working."""
import pickle

import pytest

import minikeras as mk

NAMES = ["CancelledError", "UnknownError", "InvalidArgumentError", "DeadlineExceededError", "NotFoundError",
         "AlreadyExistsError", "PermissionDeniedError", "UnauthenticatedError", "ResourceExhaustedError",
         "FailedPreconditionError", "AbortedError", "OutOfRangeError", "UnimplementedError", "InternalError",
         "UnavailableError", "DataLossError"]


@pytest.mark.parametrize("name", NAMES)
def test_classes_match_tf(name):
    cls = getattr(mk.errors, name)
    error = cls(None, "MatMul", "message")
    assert isinstance(error, mk.errors.OpError)
    assert str(error) == error.message == "message" and error.op == "MatMul" and error.node_def is None
    code = {"DeadlineExceededError": "DEADLINE_EXCEEDED", "NotFoundError": "NOT_FOUND"}.get(name)
    if code:
        assert error.error_code == getattr(mk.errors, code)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is cls and copy.message == "message"


def test_codes_are_tfs():
    assert (mk.errors.OK, mk.errors.INVALID_ARGUMENT, mk.errors.NOT_FOUND, mk.errors.OUT_OF_RANGE,
            mk.errors.UNIMPLEMENTED, mk.errors.DATA_LOSS, mk.errors.UNAUTHENTICATED) == (0, 3, 5, 11, 12, 15, 16)
    assert mk.errors.InvalidArgumentError(None, None, "m").error_code == 3


def test_python_bases():
    assert issubclass(mk.errors.InvalidArgumentError, ValueError)
    assert issubclass(mk.errors.OutOfRangeError, IndexError)
    assert issubclass(mk.errors.NotFoundError, FileNotFoundError)
    assert issubclass(mk.errors.UnimplementedError, NotImplementedError)
    assert issubclass(mk.errors.ResourceExhaustedError, MemoryError)
    with pytest.raises(ValueError):
        mk.matmul(mk.ones((2, 3)), mk.ones((2, 3)))

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


# (call, TF 2.21 op name) for shape errors that TF raises as InvalidArgumentError
SHAPE_ERRORS = [
    (lambda: mk.reshape(mk.ones((2, 3)), (4,)), "Reshape"),
    (lambda: mk.concat([mk.ones((2, 3)), mk.ones((2, 4))], 0), "ConcatV2"),
    (lambda: mk.stack([mk.ones((2, 3)), mk.ones((2, 4))]), "Pack"),
    (lambda: mk.transpose(mk.ones((2, 3)), [0, 0]), "Transpose"),
    (lambda: mk.split(mk.ones((2, 3)), 2, axis=1), "Split"),
    (lambda: mk.reduce_sum(mk.ones((2, 3)), axis=2), "reduce_sum"),
    (lambda: mk.squeeze(mk.ones((2, 3)), axis=0), "Squeeze"),
    (lambda: mk.broadcast_to(mk.ones((2, 3)), (3, 4)), "BroadcastTo"),
    (lambda: mk.tile(mk.ones((2, 3)), [2]), "Tile"),
    (lambda: mk.gather(mk.ones((3,)), [0, 5]), "GatherV2"),
    (lambda: mk.matmul(mk.ones((2, 3)), mk.ones((2, 3))), "MatMul"),
]


@pytest.mark.parametrize("call, op", SHAPE_ERRORS, ids=[op for _, op in SHAPE_ERRORS])
def test_shape_errors_are_invalid_argument(call, op):
    with pytest.raises(mk.errors.InvalidArgumentError, match=rf"\[Op:{op}\]") as info:
        call()
    assert info.value.op == op

"""mk.train.Checkpoint: the TF guide's training-checkpoints flow, object paths as TF 2.21
names them (checked with tf.train.list_variables on the same program), restore statuses,
and TF's errors."""
import numpy as np
import pytest

import minikeras as mk


class Net(mk.Model):
    def __init__(self):
        super().__init__()
        self.l1 = mk.layers.Dense(5)

    def call(self, x, training=None):
        return self.l1(x)


def _trained(steps=3):
    net = Net()
    net(mk.ones((1, 1)))
    opt = mk.optimizers.Adam(0.1)
    x = np.arange(1.0, 11.0, dtype=np.float32)[:, None]
    for i in range(steps):
        with mk.GradientTape() as tape:
            loss = mk.reduce_mean(mk.abs(net(x[i:i + 2]) - 2 * x[i:i + 2]))
        opt.apply_gradients(zip(tape.gradient(loss, net.trainable_variables), net.trainable_variables))
    return net, opt


@pytest.fixture(scope="module")
def trained():
    return _trained()


def test_keys_follow_tf_object_paths(trained, tmp_path):
    net, opt = trained
    ckpt = mk.train.Checkpoint(step=mk.Variable(1), optimizer=opt, net=net)
    path = ckpt.save(str(tmp_path / "ckpt"))
    assert path == str(tmp_path / "ckpt-1")
    # TF 2.21 + Keras 3 lists the same keys (its Dense holds the kernel as '_kernel', behind the LoRA-aware
    # `kernel` property) and _CHECKPOINTABLE_OBJECT_GRAPH
    assert mk.train.list_variables(path) == [
        ("net/l1/_kernel/.ATTRIBUTES/VARIABLE_VALUE", [1, 5]),
        ("net/l1/bias/.ATTRIBUTES/VARIABLE_VALUE", [5]),
        ("optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE", []),
        ("optimizer/_learning_rate/.ATTRIBUTES/VARIABLE_VALUE", []),
        ("optimizer/_variables/2/.ATTRIBUTES/VARIABLE_VALUE", [1, 5]),
        ("optimizer/_variables/3/.ATTRIBUTES/VARIABLE_VALUE", [1, 5]),
        ("optimizer/_variables/4/.ATTRIBUTES/VARIABLE_VALUE", [5]),
        ("optimizer/_variables/5/.ATTRIBUTES/VARIABLE_VALUE", [5]),
        ("save_counter/.ATTRIBUTES/VARIABLE_VALUE", []),
        ("step/.ATTRIBUTES/VARIABLE_VALUE", []),
    ]
    assert mk.train.latest_checkpoint(str(tmp_path)) == path
    np.testing.assert_array_equal(mk.train.load_variable(path, "net/l1/_kernel/.ATTRIBUTES/VARIABLE_VALUE"),
                                  net.l1.kernel.numpy())


def test_restore_into_fresh_objects_is_exact(trained, tmp_path):
    net, opt = trained
    step = mk.Variable(7)
    path = mk.train.Checkpoint(step=step, optimizer=opt, net=net).save(str(tmp_path / "ckpt"))

    net2, opt2, step2 = Net(), mk.optimizers.Adam(0.1), mk.Variable(0)
    net2(mk.ones((1, 1)))
    opt2.build(net2.trainable_variables)
    status = mk.train.Checkpoint(step=step2, optimizer=opt2, net=net2).restore(path)
    assert status.assert_consumed() is status
    assert int(step2.numpy()) == 7 and int(opt2.iterations.numpy()) == int(opt.iterations.numpy())
    for a, b in zip(net2.variables + opt2.variables, net.variables + opt.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_partial_restore_and_statuses(trained, tmp_path):
    net, opt = trained
    path = mk.train.Checkpoint(optimizer=opt, net=net).write(str(tmp_path / "w"))
    assert path == str(tmp_path / "w") and mk.train.latest_checkpoint(str(tmp_path)) is None  # write: no state file

    net2 = Net()
    net2(mk.ones((1, 1)))
    status = mk.train.Checkpoint(net=net2).restore(path)
    with pytest.raises(AssertionError, match="Unresolved object in checkpoint.*optimizer/_iterations"):
        status.assert_consumed()
    status.expect_partial().assert_existing_objects_matched()
    np.testing.assert_array_equal(net2.l1.kernel.numpy(), net.l1.kernel.numpy())

    extra = mk.Variable(1.0)
    status = mk.train.Checkpoint(net=net2, extra=extra).restore(path)
    with pytest.raises(AssertionError, match="not assigned a value.*extra/.ATTRIBUTES"):
        status.assert_existing_objects_matched()

    none_status = mk.train.Checkpoint(net=net2).restore(None)
    assert none_status.expect_partial() is none_status
    with pytest.raises(AssertionError, match="No checkpoint specified"):
        none_status.assert_consumed()


def test_errors(tmp_path):
    with pytest.raises(mk.errors.NotFoundError, match="Error when restoring from checkpoint at .*nope-1"):
        mk.train.Checkpoint(v=mk.Variable(1.0)).restore(str(tmp_path / "nope-1"))
    path = mk.train.Checkpoint(v=mk.Variable(3.0)).write(str(tmp_path / "v"))
    other = mk.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match=r"incompatible tensor with shape \(\) .* variable with shape \(2,\)"):
        mk.train.Checkpoint(v=other).read(path)
    np.testing.assert_array_equal(other.numpy(), [1.0, 2.0])
    with pytest.raises(ValueError, match="expecting it to be a checkpointable object"):
        mk.train.Checkpoint(it=iter([1]))
    with pytest.raises(ValueError, match="expecting n to be a checkpointable object"):
        mk.train.Checkpoint(n=3)


def test_attributes_set_later_and_nested_checkpoints(tmp_path):
    ckpt = mk.train.Checkpoint()
    ckpt.a = mk.Variable(2.0)
    outer = mk.train.Checkpoint(inner=ckpt, b=mk.Variable([1, 2]))
    path = outer.write(str(tmp_path / "n"))
    keys = [k for k, _ in mk.train.list_variables(path)]
    assert keys == ["b/.ATTRIBUTES/VARIABLE_VALUE", "inner/a/.ATTRIBUTES/VARIABLE_VALUE"]
    ckpt.a.assign(0.0)
    outer.read(path).assert_consumed()
    assert float(ckpt.a.numpy()) == 2.0

    # TF 2.21 names these d/w, vs/0 and vs/1 too
    listed = mk.train.Checkpoint(vs=[mk.Variable(1.0), mk.Variable(2.0)], d={"w": mk.Variable(3.0)})
    keys = [k for k, _ in mk.train.list_variables(listed.write(str(tmp_path / "l")))]
    assert keys == ["d/w/.ATTRIBUTES/VARIABLE_VALUE", "vs/0/.ATTRIBUTES/VARIABLE_VALUE",
                    "vs/1/.ATTRIBUTES/VARIABLE_VALUE"]


def test_not_a_checkpoint_file(tmp_path):
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not hdf5 at all")
    with pytest.raises(mk.errors.DataLossError, match="truncated or corrupted"):
        mk.train.Checkpoint(v=mk.Variable(1.0)).restore(str(bad))


def test_compiled_model_brings_its_optimizer(tmp_path):
    model = mk.Sequential([mk.layers.Dense(2), mk.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    x = np.ones((4, 3), np.float32)
    model.fit(x, np.ones((4, 1), np.float32), epochs=1, verbose=0)
    path = mk.train.Checkpoint(model=model).write(str(tmp_path / "m"))
    keys = [k for k, _ in mk.train.list_variables(path)]
    assert "model/_layers/0/_kernel/.ATTRIBUTES/VARIABLE_VALUE" in keys  # Keras 3 on TF: _kernel
    assert "model/_layers/1/bias/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert "model/optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE" in keys

    fresh = mk.Sequential([mk.layers.Dense(2), mk.layers.Dense(1)])
    fresh(x)
    mk.train.Checkpoint(model=fresh).restore(path).expect_partial().assert_existing_objects_matched()
    np.testing.assert_allclose(fresh.predict(x, verbose=0), model.predict(x, verbose=0))

"""TensorFlow's mixed precision guide (site/en/guide/mixed_precision.ipynb), renamed to minikeras
and shrunk to seconds: synthetic MNIST-shaped data (each class brightens a band of pixels) instead of MNIST,
512 training examples, batch 128, 2 epochs. Its policy is 'mixed_float16', which on a CPU is
allowed with one warning (float16 has no fast arithmetic here)."""
import warnings

import numpy as np
import pytest

import minikeras as tf
from minikeras import keras
from minikeras.keras import layers, mixed_precision


@pytest.fixture
def guide_policy():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float16 on a CPU warns once per process
        policy = mixed_precision.Policy('mixed_float16')
        mixed_precision.set_global_policy(policy)
    yield policy
    mixed_precision.set_global_policy('float32')


def synthetic_mnist(n_train=512, n_test=256):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 10, n_train + n_test).astype('int32')
    x = rng.random((n_train + n_test, 784)).astype('float32') * 0.5
    for label in range(10):  # each class brightens its own band of 78 pixels
        x[y == label, 78 * label:78 * (label + 1)] += 0.5
    return (x[:n_train], y[:n_train]), (x[n_train:], y[n_train:])


def test_the_guide_runs(guide_policy, capsys):
    policy = guide_policy
    print('Compute dtype: %s' % policy.compute_dtype)
    print('Variable dtype: %s' % policy.variable_dtype)

    inputs = keras.Input(shape=(784,), name='digits')
    if tf.config.list_physical_devices('GPU'):
        num_units = 4096
    else:
        num_units = 64
    dense1 = layers.Dense(num_units, activation='relu', name='dense_1')
    x = dense1(inputs)
    dense2 = layers.Dense(num_units, activation='relu', name='dense_2')
    x = dense2(x)
    print(dense1.dtype_policy)
    print('x.dtype: %s' % x.dtype.name)
    print('dense1.kernel.dtype: %s' % dense1.kernel.dtype.name)

    # INCORRECT: softmax and model output will be float16, when it should be float32
    outputs = layers.Dense(10, activation='softmax', name='predictions')(x)
    print('Outputs dtype: %s' % outputs.dtype.name)
    # CORRECT: softmax and model output are float32
    x = layers.Dense(10, name='dense_logits')(x)
    outputs = layers.Activation('softmax', dtype='float32', name='predictions')(x)
    print('Outputs dtype: %s' % outputs.dtype.name)
    outputs = layers.Activation('linear', dtype='float32')(outputs)

    model = keras.Model(inputs=inputs, outputs=outputs)
    model.compile(loss='sparse_categorical_crossentropy',
                  optimizer=keras.optimizers.RMSprop(),
                  metrics=['accuracy'])
    (x_train, y_train), (x_test, y_test) = synthetic_mnist()
    initial_weights = model.get_weights()
    history = model.fit(x_train, y_train, batch_size=128, epochs=2, validation_split=0.2, verbose=0)
    test_scores = model.evaluate(x_test, y_test, verbose=0)
    assert isinstance(model.optimizer, mixed_precision.LossScaleOptimizer)  # compile added it, as Keras 3
    assert np.isfinite(history.history['loss']).all() and test_scores[1] > 0.5  # chance is 0.1

    x = tf.constant(256, dtype='float16')
    assert np.isinf((x ** 2).numpy())  # Overflow
    x = tf.constant(1e-5, dtype='float16')
    assert (x ** 2).numpy() == 0  # Underflow

    optimizer = keras.optimizers.RMSprop()
    optimizer = mixed_precision.LossScaleOptimizer(optimizer)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy()
    train_dataset = (tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(10000).batch(128))
    test_dataset = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(128)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            predictions = model(x)
            loss = loss_object(y, predictions)
            scaled_loss = optimizer.get_scaled_loss(loss)
        scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
        gradients = optimizer.get_unscaled_gradients(scaled_gradients)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    @tf.function
    def test_step(x):
        return model(x, training=False)

    model.set_weights(initial_weights)
    accuracies = []
    for epoch in range(2):
        epoch_loss_avg = tf.keras.metrics.Mean()
        test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name='test_accuracy')
        for x, y in train_dataset:
            loss = train_step(x, y)
            epoch_loss_avg(loss)
        for x, y in test_dataset:
            predictions = test_step(x)
            test_accuracy.update_state(y, predictions)
        print('Epoch {}: loss={}, test accuracy={}'.format(epoch, epoch_loss_avg.result(), test_accuracy.result()))
        accuracies.append(float(test_accuracy.result()))
    assert accuracies[-1] > 0.5 and int(optimizer.iterations.numpy()) == 8

    out = capsys.readouterr().out
    assert out.startswith("Compute dtype: float16\nVariable dtype: float32\n"
                          '<DTypePolicy "mixed_float16">\nx.dtype: float16\ndense1.kernel.dtype: float32\n'
                          "Outputs dtype: float16\nOutputs dtype: float32\n"), out

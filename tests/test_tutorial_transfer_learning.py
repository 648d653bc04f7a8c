"""The "Transfer learning and fine-tuning" tutorials' code, renamed (``tf`` -> ``mk``) and run at tiny
sizes, and what they claim checked:

- TensorFlow's tutorial (tensorflow/docs, site/en/tutorials/images/transfer_learning.ipynb):
  cats and dogs (here a synthetic image folder: "cats" reddish, "dogs" bluish, 32x32 instead of
  160x160) through ``image_dataset_from_directory``, a frozen MobileNetV2 base (alpha 0.35 and
  ``weights=None`` instead of 'imagenet': offline and small) called with ``training=False``, a
  new head trained, then the base unfrozen from layer 100 on and the whole recompiled with
  RMSprop at a tenth of the rate. Keras 3.15.1 on JAX, on the same code, gives 154 base
  layers, 2 trainable variables with the base frozen, and 56 (335,137 parameters) when fine-tuning.
- keras.io's guide (guides/transfer_learning.py): the ``trainable`` attribute's weight counts, a
  frozen layer unchanged by ``fit``, ``trainable`` set recursively, BatchNormalization in
  inference mode when frozen, and the custom training loop over ``model.trainable_weights``.
"""
import os

import numpy as np
import pytest

import minikeras as mk

IMG_SIZE = (32, 32)
BATCH_SIZE = 8


def write_cats_and_dogs(root, per_class):
    """``root/{train,validation}/{cats,dogs}/*.png``: noisy images, reddish cats and bluish dogs."""
    rng = np.random.default_rng(0)
    for split, count in per_class.items():
        for label, name in enumerate(["cats", "dogs"]):
            folder = os.path.join(root, split, name)
            os.makedirs(folder)
            for i in range(count):
                image = rng.uniform(0, 120, IMG_SIZE + (3,))
                image[..., 2 * label] += 120  # red for cats, blue for dogs
                mk.io.write_file(os.path.join(folder, f"{i}.png"), mk.io.encode_png(image.astype("uint8")))
    return root


def base_weights(base_model):
    return {w.path: np.array(w.numpy()) for w in base_model.weights}


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory):
    """Runs the TensorFlow tutorial once; returns what the tests look at."""
    pytest.importorskip("PIL")
    PATH = write_cats_and_dogs(str(tmp_path_factory.mktemp("cats_and_dogs_filtered")),
                               {"train": 16, "validation": 20})
    seen = {}
    mk.random.set_seed(0)
    # -- the tutorial, renamed ------------------------------------------------------------
    train_dir = os.path.join(PATH, 'train')
    validation_dir = os.path.join(PATH, 'validation')
    train_dataset = mk.keras.utils.image_dataset_from_directory(train_dir, shuffle=True, batch_size=BATCH_SIZE,
                                                                image_size=IMG_SIZE)
    validation_dataset = mk.keras.utils.image_dataset_from_directory(validation_dir, shuffle=True,
                                                                     batch_size=BATCH_SIZE, image_size=IMG_SIZE)
    class_names = train_dataset.class_names
    val_batches = mk.data.experimental.cardinality(validation_dataset)
    test_dataset = validation_dataset.take(val_batches // 5)
    validation_dataset = validation_dataset.skip(val_batches // 5)
    seen["batches"] = (int(mk.data.experimental.cardinality(validation_dataset)),
                       int(mk.data.experimental.cardinality(test_dataset)))
    AUTOTUNE = mk.data.AUTOTUNE
    train_dataset = train_dataset.prefetch(buffer_size=AUTOTUNE)
    validation_dataset = validation_dataset.prefetch(buffer_size=AUTOTUNE)
    test_dataset = test_dataset.prefetch(buffer_size=AUTOTUNE)
    data_augmentation = mk.keras.Sequential([
        mk.keras.layers.RandomFlip('horizontal'),
        mk.keras.layers.RandomRotation(0.2),
    ])
    preprocess_input = mk.keras.applications.mobilenet_v2.preprocess_input

    IMG_SHAPE = IMG_SIZE + (3,)
    base_model = mk.keras.applications.MobileNetV2(input_shape=IMG_SHAPE, include_top=False, weights=None, alpha=0.35)
    image_batch, label_batch = next(iter(train_dataset))
    feature_batch = base_model(image_batch)
    base_model.trainable = False
    global_average_layer = mk.keras.layers.GlobalAveragePooling2D()
    feature_batch_average = global_average_layer(feature_batch)
    prediction_layer = mk.keras.layers.Dense(1, activation='sigmoid')
    prediction_batch = prediction_layer(feature_batch_average)
    seen["shapes"] = (tuple(feature_batch.shape), tuple(feature_batch_average.shape), tuple(prediction_batch.shape))

    inputs = mk.keras.Input(shape=IMG_SHAPE)
    x = data_augmentation(inputs)
    x = preprocess_input(x)
    x = base_model(x, training=False)
    x = global_average_layer(x)
    x = mk.keras.layers.Dropout(0.2)(x)
    outputs = prediction_layer(x)
    model = mk.keras.Model(inputs, outputs)
    seen["frozen_trainable_variables"] = len(model.trainable_variables)

    base_learning_rate = 0.0001
    model.compile(optimizer=mk.keras.optimizers.Adam(learning_rate=base_learning_rate),
                  loss=mk.keras.losses.BinaryCrossentropy(),
                  metrics=[mk.keras.metrics.BinaryAccuracy(threshold=0.5, name='accuracy')])
    initial_epochs = 2
    seen["before_head"] = base_weights(base_model)
    seen["head_before"] = [np.array(w.numpy()) for w in prediction_layer.weights]
    loss0, accuracy0 = model.evaluate(validation_dataset, verbose=0)
    history = model.fit(train_dataset, epochs=initial_epochs, validation_data=validation_dataset, verbose=0)
    seen["after_head"] = base_weights(base_model)
    seen["head_after"] = [np.array(w.numpy()) for w in prediction_layer.weights]

    base_model.trainable = True
    seen["base_layers"] = len(base_model.layers)
    fine_tune_at = 100
    for layer in base_model.layers[:fine_tune_at]:
        layer.trainable = False
    model.compile(loss=mk.keras.losses.BinaryCrossentropy(),
                  optimizer=mk.keras.optimizers.RMSprop(learning_rate=base_learning_rate / 10),
                  metrics=[mk.keras.metrics.BinaryAccuracy(threshold=0.5, name='accuracy')])
    summary = []
    model.summary(print_fn=summary.append)
    seen["fine_tune_trainable_variables"] = len(model.trainable_variables)
    seen["fine_tune_trainable_parameters"] = sum(int(np.prod(v.shape)) for v in model.trainable_variables)
    fine_tune_epochs = 2
    total_epochs = initial_epochs + fine_tune_epochs
    history_fine = model.fit(train_dataset, epochs=total_epochs, initial_epoch=len(history.epoch),
                             validation_data=validation_dataset, verbose=0)
    seen["after_fine_tuning"] = base_weights(base_model)
    loss, accuracy = model.evaluate(test_dataset, verbose=0)
    image_batch, label_batch = test_dataset.as_numpy_iterator().next()
    predictions = model.predict_on_batch(image_batch).flatten()
    seen["probabilities"] = np.asarray(predictions)
    predictions = mk.where(predictions < 0.5, 0, 1)
    # -- end of the tutorial's code ---------------------------------------------------------
    seen.update(base_model=base_model, fine_tune_at=fine_tune_at, history=history, history_fine=history_fine,
                evaluations=(loss0, accuracy0, loss, accuracy), predictions=predictions.numpy(),
                labels=label_batch, class_names=class_names, summary="\n".join(summary))
    return seen


def test_the_pipeline_and_the_shapes_the_tutorial_prints(tutorial):
    assert tutorial["class_names"] == ["cats", "dogs"]
    assert tutorial["batches"] == (4, 1)  # 40 validation images in 5 batches: one fifth becomes the test set
    assert tutorial["shapes"] == ((BATCH_SIZE, 1, 1, 1280), (BATCH_SIZE, 1280), (BATCH_SIZE, 1))
    assert tutorial["base_layers"] == 154


def test_a_frozen_base_leaves_two_trainable_variables_and_does_not_change(tutorial):
    assert tutorial["frozen_trainable_variables"] == 2  # the Dense head's kernel and bias
    before, after = tutorial["before_head"], tutorial["after_head"]
    assert before.keys() == after.keys() and any("moving_mean" in path for path in before)
    for path in before:  # kernels and BatchNormalization's moving statistics alike
        np.testing.assert_array_equal(before[path], after[path], err_msg=path)
    assert not np.array_equal(tutorial["head_before"][0], tutorial["head_after"][0])


def test_fine_tuning_trains_the_top_layers_only_and_keeps_batchnorm_statistics(tutorial):
    assert tutorial["fine_tune_trainable_variables"] == 56
    assert tutorial["fine_tune_trainable_parameters"] == 335137
    base, at = tutorial["base_model"], tutorial["fine_tune_at"]
    before, after = tutorial["after_head"], tutorial["after_fine_tuning"]
    frozen = {w.path for layer in base.layers[:at] for w in layer.weights}
    tuned = {w.path for layer in base.layers[at:] for w in layer.trainable_weights}
    statistics = {w.path for w in base.non_trainable_weights if "moving" in w.path}
    assert len(tuned) == 54 and len(statistics) == 2 * 52
    for path in frozen | statistics:  # training=False: BatchNormalization runs in inference mode
        np.testing.assert_array_equal(before[path], after[path], err_msg=path)
    changed = {path for path in before if not np.array_equal(before[path], after[path])}
    assert changed <= tuned, sorted(changed - tuned)
    # every BatchNormalization beta above layer 100 gets the sum of its outputs' gradients and
    # moves; with random weights many kernels above see gradients too small for a step
    betas = {path for path in tuned if path.endswith("/beta")}
    assert len(betas) == 18 and betas <= changed, sorted(betas - changed)


def test_the_history_and_evaluations_the_tutorial_plots(tutorial):
    history, history_fine = tutorial["history"], tutorial["history_fine"]
    assert history.epoch == [0, 1] and history_fine.epoch == [2, 3]  # initial_epoch=len(history.epoch)
    for h in (history, history_fine):
        assert {"accuracy", "val_accuracy", "loss", "val_loss"} <= set(h.history)
        assert all(len(values) == 2 for values in h.history.values())
    loss0, accuracy0, loss, accuracy = tutorial["evaluations"]
    assert np.isfinite([loss0, loss]).all() and 0 <= accuracy0 <= 1 and 0 <= accuracy <= 1
    probabilities = tutorial["probabilities"]
    assert probabilities.shape == (BATCH_SIZE,) and np.all((probabilities > 0) & (probabilities < 1))
    np.testing.assert_array_equal(tutorial["predictions"], (probabilities >= 0.5).astype(int))
    assert tutorial["labels"].shape == (BATCH_SIZE,)
    assert "Trainable params: 335,137" in tutorial["summary"], tutorial["summary"][-600:]


# -- keras.io's guide: the trainable API -----------------------------------------------------
def test_weight_counts_of_the_trainable_api():
    keras = mk.keras
    layer = keras.layers.Dense(3)
    layer.build((None, 4))
    assert (len(layer.weights), len(layer.trainable_weights), len(layer.non_trainable_weights)) == (2, 2, 0)
    layer = keras.layers.BatchNormalization()
    layer.build((None, 4))
    assert (len(layer.weights), len(layer.trainable_weights), len(layer.non_trainable_weights)) == (4, 2, 2)
    layer = keras.layers.Dense(3)
    layer.build((None, 4))
    layer.trainable = False
    assert (len(layer.weights), len(layer.trainable_weights), len(layer.non_trainable_weights)) == (2, 0, 2)


def test_a_frozen_layer_is_not_changed_by_fit_and_trainable_is_recursive():
    keras = mk.keras
    layer1 = keras.layers.Dense(3, activation="relu")
    layer2 = keras.layers.Dense(3, activation="sigmoid")
    model = keras.Sequential([keras.Input(shape=(3,)), layer1, layer2])
    layer1.trainable = False
    initial_layer1_weights_values = layer1.get_weights()
    initial_layer2_weights_values = layer2.get_weights()
    model.compile(optimizer="adam", loss="mse")
    rng = np.random.default_rng(0)
    model.fit(rng.random((2, 3)), rng.random((2, 3)), verbose=0)
    final_layer1_weights_values = layer1.get_weights()
    np.testing.assert_allclose(initial_layer1_weights_values[0], final_layer1_weights_values[0])
    np.testing.assert_allclose(initial_layer1_weights_values[1], final_layer1_weights_values[1])
    # the trainable layer moved (its bias: the kernel's gradient is zero where layer1's ReLU outputs are)
    assert not np.array_equal(initial_layer2_weights_values[1], layer2.get_weights()[1])

    inner_model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(3, activation="relu"),
                                    keras.layers.Dense(3, activation="relu")])
    model = keras.Sequential([keras.Input(shape=(3,)), inner_model, keras.layers.Dense(3, activation="sigmoid")])
    model.trainable = False
    assert inner_model.trainable is False
    assert inner_model.layers[0].trainable is False


def test_a_frozen_batchnormalization_runs_in_inference_mode():
    """A frozen BatchNormalization called with training=True normalizes with its moving statistics
    and leaves them as they are; unfrozen, the same call uses the batch's and updates them."""
    x = np.random.default_rng(0).normal(3.0, 2.0, (16, 4)).astype("float32")
    layer = mk.keras.layers.BatchNormalization()
    layer.build((None, 4))
    layer.moving_mean.assign(np.full(4, 1.0, "float32"))
    layer.moving_variance.assign(np.full(4, 4.0, "float32"))
    layer.trainable = False
    inference = (x - 1.0) / np.sqrt(4.0 + layer.epsilon)
    np.testing.assert_allclose(layer(x, training=True).numpy(), inference, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(layer.moving_mean.numpy(), np.full(4, 1.0))
    layer.trainable = True
    batch = (x - x.mean(0)) / np.sqrt(x.var(0) + layer.epsilon)
    np.testing.assert_allclose(layer(x, training=True).numpy(), batch, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(layer.moving_mean.numpy(), 0.99 * 1.0 + 0.01 * x.mean(0), rtol=1e-5)


def test_the_custom_training_loop_updates_the_trainable_weights_only():
    keras = mk.keras
    base_model = keras.Sequential([keras.Input(shape=(4, 4, 3)), keras.layers.Conv2D(4, 3),
                                   keras.layers.BatchNormalization()], name="base")
    base_model.trainable = False
    inputs = keras.Input(shape=(4, 4, 3))
    x = base_model(inputs, training=False)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
    optimizer = keras.optimizers.Adam()
    frozen = [w.numpy().copy() for w in base_model.weights]
    head = [w.numpy().copy() for w in model.trainable_weights]
    rng = np.random.default_rng(0)
    new_dataset = [(rng.normal(size=(8, 4, 4, 3)).astype("float32"), rng.integers(0, 2, (8, 1)).astype("float32"))
                   for _ in range(3)]
    for inputs, targets in new_dataset:
        with mk.GradientTape() as tape:
            predictions = model(inputs)
            loss_value = loss_fn(targets, predictions)
        gradients = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(gradients, model.trainable_weights))
    assert len(model.trainable_weights) == 2
    for before, w in zip(frozen, base_model.weights):
        np.testing.assert_array_equal(before, w.numpy(), err_msg=w.path)
    assert all(not np.array_equal(before, w.numpy()) for before, w in zip(head, model.trainable_weights))

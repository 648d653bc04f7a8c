"""More keras.io examples (keras-team/keras-io, ``examples/``, Apache 2.0) run under
``from minikeras import keras``, the ones that use layers Keras 3 added (ConvLSTM2D,
STFTSpectrogram, ...) and keras.utils.Sequence.

As in test_keras_io_examples.py, each test is the example's code with only the imports renamed
(``from tensorflow import keras`` / ``import keras`` -> ``from minikeras import keras``,
``from tensorflow.keras import layers`` -> ``from minikeras.keras import layers``), its sizes
shrunk (fewer samples, frames, filters and epochs) and its download replaced by data made here
with the same shapes and dtypes. Plots, displays and downloads are left out. Each asserts what
the example shows: the model trains (finite loss that goes down) and its outputs have the shapes
the example relies on.
"""
import os

import numpy as np
import pytest

from minikeras import keras
from minikeras.keras import layers


@pytest.fixture(autouse=True)
def seeded():
    """Each example starts from the same weights and draws, so a short run's losses repeat."""
    keras.utils.set_random_seed(1337)


def assert_trains(losses, drop=1.0):
    """Every loss is finite and the last is below the first (times ``drop``)."""
    losses = np.asarray(losses, dtype=float)
    assert np.all(np.isfinite(losses)), losses
    assert losses[-1] < drop * losses[0], losses


def moving_squares(rng, n, frames, size):
    """uint8 videos (n, frames, size, size) of a bright 3x3 square stepping one pixel per frame:
    a learnable stand-in for Moving MNIST (np.load of mnist_test_seq.npy, swapped to this layout)."""
    videos = np.zeros((n, frames, size, size), dtype="uint8")
    for i in range(n):
        row, col = rng.integers(0, size - 3, 2)
        step = rng.choice([-1, 1], 2)
        for t in range(frames):
            videos[i, t, row:row + 3, col:col + 3] = 255
            if not 0 <= row + step[0] <= size - 3:
                step[0] = -step[0]
            if not 0 <= col + step[1] <= size - 3:
                step[1] = -step[1]
            row, col = row + step[0], col + step[1]
    return videos


# -- vision/conv_lstm.py ---------------------------------------------------------------------
def test_conv_lstm_next_frame_prediction():
    rng = np.random.default_rng(0)
    # np.load(moving_mnist.npy) swapped to (samples, frames, 64, 64): 20 frames of 64x64 there,
    # 5 frames of 8x8 here
    dataset = moving_squares(rng, 30, 5, 8)

    dataset = np.expand_dims(dataset, axis=-1)
    indexes = np.arange(dataset.shape[0])
    np.random.shuffle(indexes)
    train_index = indexes[: int(0.9 * dataset.shape[0])]
    val_index = indexes[int(0.9 * dataset.shape[0]):]
    train_dataset = dataset[train_index]
    val_dataset = dataset[val_index]
    train_dataset = train_dataset / 255
    val_dataset = val_dataset / 255

    def create_shifted_frames(data):
        x = data[:, 0: data.shape[1] - 1, :, :]
        y = data[:, 1: data.shape[1], :, :]
        return x, y

    x_train, y_train = create_shifted_frames(train_dataset)
    x_val, y_val = create_shifted_frames(val_dataset)
    assert x_train.shape == (27, 4, 8, 8, 1) and y_val.shape == (3, 4, 8, 8, 1)

    inp = layers.Input(shape=(None, *x_train.shape[2:]))
    # 64 filters in each ConvLSTM2D of the example
    x = layers.ConvLSTM2D(filters=8, kernel_size=(5, 5), padding="same",
                          return_sequences=True, activation="relu")(inp)
    x = layers.BatchNormalization()(x)
    x = layers.ConvLSTM2D(filters=8, kernel_size=(3, 3), padding="same",
                          return_sequences=True, activation="relu")(x)
    x = layers.BatchNormalization()(x)
    x = layers.ConvLSTM2D(filters=8, kernel_size=(1, 1), padding="same",
                          return_sequences=True, activation="relu")(x)
    x = layers.Conv3D(filters=1, kernel_size=(3, 3, 3), activation="sigmoid", padding="same")(x)
    model = keras.models.Model(inp, x)
    model.compile(loss=keras.losses.binary_crossentropy, optimizer=keras.optimizers.Adam())
    assert model.output_shape == (None, None, 8, 8, 1)

    early_stopping = keras.callbacks.EarlyStopping(monitor="val_loss", patience=10)
    reduce_lr = keras.callbacks.ReduceLROnPlateau(monitor="val_loss", patience=5)
    epochs = 3  # 20 in the example
    batch_size = 9  # 5 in the example
    history = model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs,
                        validation_data=(x_val, y_val), callbacks=[early_stopping, reduce_lr],
                        verbose=0)
    assert_trains(history.history["loss"])
    assert np.all(np.isfinite(history.history["val_loss"]))

    # Frame prediction: the model extends a clip one predicted frame at a time, at a new length
    example = val_dataset[np.random.choice(range(len(val_dataset)), size=1)[0]]
    frames = example[:3, ...]
    for _ in range(3):  # 10 in the example
        new_prediction = model.predict(np.expand_dims(frames, axis=0), verbose=0)
        new_prediction = np.squeeze(new_prediction, axis=0)
        predicted_frame = np.expand_dims(new_prediction[-1, ...], axis=0)
        frames = np.concatenate((frames, predicted_frame), axis=0)
    assert frames.shape == (6, 8, 8, 1)
    assert np.all((frames[3:] >= 0) & (frames[3:] <= 1))


# -- timeseries/timeseries_classification_transformer.py -------------------------------------
def test_timeseries_classification_transformer():
    rng = np.random.default_rng(0)
    # readucr(FordA_TRAIN.tsv): labels -1/1 and 500-step series; here two waveforms in noise
    n, steps = 80, 24
    y_all = rng.choice([-1, 1], n)
    t = np.linspace(0, 4 * np.pi, steps)
    x_all = np.where(y_all[:, None] > 0, np.sin(t), np.sign(np.sin(t)) * 0.5)
    x_all = x_all + 0.3 * rng.standard_normal((n, steps))
    x_train, y_train = x_all[:64], y_all[:64].astype(int)
    x_test, y_test = x_all[64:], y_all[64:].astype(int)

    x_train = x_train.reshape((x_train.shape[0], x_train.shape[1], 1))
    x_test = x_test.reshape((x_test.shape[0], x_test.shape[1], 1))
    n_classes = len(np.unique(y_train))
    idx = np.random.permutation(len(x_train))
    x_train = x_train[idx]
    y_train = y_train[idx]
    y_train[y_train == -1] = 0
    y_test[y_test == -1] = 0

    def transformer_encoder(inputs, head_size, num_heads, ff_dim, dropout=0):
        x = layers.MultiHeadAttention(key_dim=head_size, num_heads=num_heads,
                                      dropout=dropout)(inputs, inputs)
        x = layers.Dropout(dropout)(x)
        x = layers.LayerNormalization(epsilon=1e-6)(x)
        res = x + inputs
        x = layers.Conv1D(filters=ff_dim, kernel_size=1, activation="relu")(res)
        x = layers.Dropout(dropout)(x)
        x = layers.Conv1D(filters=inputs.shape[-1], kernel_size=1)(x)
        x = layers.LayerNormalization(epsilon=1e-6)(x)
        return x + res

    def build_model(input_shape, head_size, num_heads, ff_dim, num_transformer_blocks,
                    mlp_units, dropout=0, mlp_dropout=0):
        inputs = keras.Input(shape=input_shape)
        x = inputs
        for _ in range(num_transformer_blocks):
            x = transformer_encoder(x, head_size, num_heads, ff_dim, dropout)
        x = layers.GlobalAveragePooling1D(data_format="channels_last")(x)
        for dim in mlp_units:
            x = layers.Dense(dim, activation="relu")(x)
            x = layers.Dropout(mlp_dropout)(x)
        outputs = layers.Dense(n_classes, activation="softmax")(x)
        return keras.Model(inputs, outputs)

    input_shape = x_train.shape[1:]
    # head_size=256, num_transformer_blocks=4, mlp_units=[128] in the example
    model = build_model(input_shape, head_size=8, num_heads=4, ff_dim=4,
                        num_transformer_blocks=2, mlp_units=[32], mlp_dropout=0.4, dropout=0.25)
    model.compile(loss="sparse_categorical_crossentropy",
                  optimizer=keras.optimizers.Adam(learning_rate=1e-3),  # 1e-4 for 200 epochs
                  metrics=["sparse_categorical_accuracy"])
    model.summary()
    callbacks = [keras.callbacks.EarlyStopping(patience=10, restore_best_weights=True)]
    history = model.fit(x_train, y_train, validation_split=0.2, epochs=3, batch_size=16,
                        callbacks=callbacks, verbose=0)
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    assert_trains(history.history["loss"])
    assert set(history.history) == {"loss", "sparse_categorical_accuracy", "val_loss",
                                    "val_sparse_categorical_accuracy"}
    assert np.isfinite(loss) and 0 <= accuracy <= 1
    assert model.output_shape == (None, 2)


# -- audio/stft.py ---------------------------------------------------------------------------
def test_audio_classification_with_stft_spectrogram():
    SAMPLE_RATE = 1000  # 16000 in the example
    NUM_CLASSES = 3  # ESC-10's 10 classes
    BATCH_SIZE = 16
    EPOCHS = 4  # 200 in the example
    rng = np.random.default_rng(0)

    def read_dataset(n):
        """read_wav_file over ESC-10 folds -> (n, samples, 1) float32 waves: a tone per class."""
        targets = rng.integers(0, NUM_CLASSES, n)
        time = np.arange(SAMPLE_RATE) / SAMPLE_RATE
        waves = np.sin(2 * np.pi * (60 + 120 * targets[:, None]) * time)
        waves = waves + 0.2 * rng.standard_normal(waves.shape)
        return waves[..., None].astype(np.float32), targets

    train_x, train_y = read_dataset(48)
    valid_x, valid_y = read_dataset(16)
    test_x, test_y = read_dataset(16)
    sample_wav_data = train_x[0]

    spectrogram = layers.STFTSpectrogram(
        mode="log", frame_length=SAMPLE_RATE * 20 // 1000, frame_step=SAMPLE_RATE * 5 // 1000,
        fft_length=64, trainable=False,  # fft_length=1024 in the example
    )(sample_wav_data[None, ...])[0, ...]
    assert tuple(spectrogram.shape) == (197, 33)

    spectrograms = np.concatenate(
        [
            layers.STFTSpectrogram(
                mode="log", frame_length=SAMPLE_RATE * x // 1000,
                frame_step=SAMPLE_RATE * 5 // 1000, fft_length=64, padding="same",
                expand_dims=True,
            )(sample_wav_data[None, ...])[0, ...]
            for x in [5, 10, 20]
        ],
        axis=-1,
    ).transpose([1, 0, 2])
    assert spectrograms.shape == (33, 200, 3)

    # filters 64/128/128/256/512 and Dense 256 in the example; kernel sizes as there
    model1d = keras.Sequential(
        [
            layers.InputLayer((None, 1)),
            layers.STFTSpectrogram(mode="log", frame_length=SAMPLE_RATE * 40 // 1000,
                                   frame_step=SAMPLE_RATE * 15 // 1000, trainable=False),
            layers.Conv1D(16, 16, activation="relu"),
            layers.Conv1D(16, 4, activation="relu"),
            layers.LayerNormalization(),
            layers.MaxPooling1D(4),
            layers.Conv1D(16, 4, activation="relu"),
            layers.LayerNormalization(),
            layers.Dropout(0.5),
            layers.GlobalMaxPooling1D(),
            layers.Dense(32, activation="relu"),
            layers.Dropout(0.5),
            layers.Dense(NUM_CLASSES, activation="softmax"),
        ],
        name="model_1d_non_trainble_stft",
    )
    model1d.compile(optimizer=keras.optimizers.Adam(1e-3),  # 1e-5 for 200 epochs
                    loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model1d.summary()
    assert model1d.layers[0].trainable_weights == []
    history_model1d = model1d.fit(
        train_x, train_y, batch_size=BATCH_SIZE, validation_data=(valid_x, valid_y),
        epochs=EPOCHS, verbose=0,
        callbacks=[keras.callbacks.EarlyStopping(monitor="val_loss", patience=EPOCHS,
                                                 restore_best_weights=True)],
    )
    assert_trains(history_model1d.history["loss"])
    _, test_acc = model1d.evaluate(test_x, test_y, verbose=0)
    assert 0 <= test_acc <= 1

    # The 2D model: three trainable multi-bandwidth spectrograms as an image's channels
    # (MobileNet(include_top=False, pooling="max") on ImageNet weights there, a small CNN here)
    input = layers.Input((None, 1))
    spectrograms = [
        layers.STFTSpectrogram(mode="log", frame_length=SAMPLE_RATE * frame_size // 1000,
                               frame_step=SAMPLE_RATE * 15 // 1000, fft_length=64,
                               padding="same", expand_dims=True)(input)
        for frame_size in [30, 40, 50]
    ]
    multi_spectrograms = layers.Concatenate(axis=-1)(spectrograms)
    output = layers.Conv2D(8, 3, activation="relu")(multi_spectrograms)
    output = layers.GlobalMaxPooling2D()(output)
    output = layers.Dense(NUM_CLASSES, activation="softmax")(output)
    model2d = keras.Model(input, output, name="model_2d_trainble_stft")
    model2d.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                    metrics=["accuracy"])
    stft_kernels = [w for w in model2d.trainable_weights if "stft" in w.path]
    assert len(stft_kernels) == 6  # real and imaginary kernels of each of the three layers
    before = [np.array(w) for w in stft_kernels]
    history_model2d = model2d.fit(train_x, train_y, batch_size=BATCH_SIZE, epochs=3, verbose=0)
    assert_trains(history_model2d.history["loss"])
    assert any(not np.allclose(b, np.array(w)) for b, w in zip(before, stft_kernels))


# -- vision/oxford_pets_image_segmentation.py -------------------------------------------------
def write_pets(root, n, size):
    """images/*.jpg and annotations/trimaps/*.png as the Oxford Pets archives unpack: a bright
    disc (the pet, trimap 1) with a ring border (3) on a dark background (2)."""
    from PIL import Image

    rng = np.random.default_rng(0)
    os.makedirs(os.path.join(root, "images"))
    os.makedirs(os.path.join(root, "annotations", "trimaps"))
    yy, xx = np.mgrid[:size, :size]
    for i in range(n):
        cy, cx = rng.integers(size // 4, 3 * size // 4, 2)
        radius = np.hypot(yy - cy, xx - cx)
        trimap = np.full((size, size), 2, dtype="uint8")
        trimap[radius < size / 4 + 2] = 3
        trimap[radius < size / 4] = 1
        image = rng.integers(0, 60, (size, size, 3)).astype("uint8")
        image[trimap == 1] = (220, 180, 120)
        Image.fromarray(image).save(os.path.join(root, "images", f"pet_{i}.jpg"))
        Image.fromarray(trimap).save(os.path.join(root, "annotations", "trimaps", f"pet_{i}.png"))


# The example's Sequence skips super().__init__(); Keras 3 gives the same warning
@pytest.mark.filterwarnings("ignore:Your `PyDataset` class should call")
def test_oxford_pets_image_segmentation(tmp_path, monkeypatch):
    write_pets(tmp_path, 16, 24)
    monkeypatch.chdir(tmp_path)
    from minikeras.keras.utils import load_img  # from tensorflow.keras.preprocessing.image

    input_dir = "images/"
    target_dir = "annotations/trimaps/"
    img_size = (16, 16)  # (160, 160) in the example; the files are 24x24, resized on loading
    num_classes = 3
    batch_size = 4  # 32 in the example

    input_img_paths = sorted([os.path.join(input_dir, fname) for fname in os.listdir(input_dir)
                              if fname.endswith(".jpg")])
    target_img_paths = sorted([os.path.join(target_dir, fname) for fname in os.listdir(target_dir)
                               if fname.endswith(".png") and not fname.startswith(".")])
    assert len(input_img_paths) == 16

    class OxfordPets(keras.utils.Sequence):
        """Helper to iterate over the data (as Numpy arrays)."""

        def __init__(self, batch_size, img_size, input_img_paths, target_img_paths):
            self.batch_size = batch_size
            self.img_size = img_size
            self.input_img_paths = input_img_paths
            self.target_img_paths = target_img_paths

        def __len__(self):
            return len(self.target_img_paths) // self.batch_size

        def __getitem__(self, idx):
            """Returns tuple (input, target) correspond to batch #idx."""
            i = idx * self.batch_size
            batch_input_img_paths = self.input_img_paths[i: i + self.batch_size]
            batch_target_img_paths = self.target_img_paths[i: i + self.batch_size]
            x = np.zeros((self.batch_size,) + self.img_size + (3,), dtype="float32")
            for j, path in enumerate(batch_input_img_paths):
                img = load_img(path, target_size=self.img_size)
                x[j] = img
            y = np.zeros((self.batch_size,) + self.img_size + (1,), dtype="uint8")
            for j, path in enumerate(batch_target_img_paths):
                img = load_img(path, target_size=self.img_size, color_mode="grayscale")
                y[j] = np.expand_dims(img, 2)
                y[j] -= 1
            return x, y

    def get_model(img_size, num_classes):
        inputs = keras.Input(shape=img_size + (3,))
        x = layers.Conv2D(8, 3, strides=2, padding="same")(inputs)  # 32 filters there
        x = layers.BatchNormalization()(x)
        x = layers.Activation("relu")(x)
        previous_block_activation = x
        for filters in [16]:  # [64, 128, 256] in the example
            x = layers.Activation("relu")(x)
            x = layers.SeparableConv2D(filters, 3, padding="same")(x)
            x = layers.BatchNormalization()(x)
            x = layers.Activation("relu")(x)
            x = layers.SeparableConv2D(filters, 3, padding="same")(x)
            x = layers.BatchNormalization()(x)
            x = layers.MaxPooling2D(3, strides=2, padding="same")(x)
            residual = layers.Conv2D(filters, 1, strides=2, padding="same")(
                previous_block_activation)
            x = layers.add([x, residual])
            previous_block_activation = x
        for filters in [16, 8]:  # [256, 128, 64, 32] in the example
            x = layers.Activation("relu")(x)
            x = layers.Conv2DTranspose(filters, 3, padding="same")(x)
            x = layers.BatchNormalization()(x)
            x = layers.Activation("relu")(x)
            x = layers.Conv2DTranspose(filters, 3, padding="same")(x)
            x = layers.BatchNormalization()(x)
            x = layers.UpSampling2D(2)(x)
            residual = layers.UpSampling2D(2)(previous_block_activation)
            residual = layers.Conv2D(filters, 1, padding="same")(residual)
            x = layers.add([x, residual])
            previous_block_activation = x
        outputs = layers.Conv2D(num_classes, 3, activation="softmax", padding="same")(x)
        model = keras.Model(inputs, outputs)
        return model

    keras.backend.clear_session()
    model = get_model(img_size, num_classes)
    model.summary()
    assert model.output_shape == (None, 16, 16, 3)

    import random

    val_samples = 4  # 1000 in the example
    random.Random(1337).shuffle(input_img_paths)
    random.Random(1337).shuffle(target_img_paths)
    train_input_img_paths = input_img_paths[:-val_samples]
    train_target_img_paths = target_img_paths[:-val_samples]
    val_input_img_paths = input_img_paths[-val_samples:]
    val_target_img_paths = target_img_paths[-val_samples:]
    train_gen = OxfordPets(batch_size, img_size, train_input_img_paths, train_target_img_paths)
    val_gen = OxfordPets(batch_size, img_size, val_input_img_paths, val_target_img_paths)
    x, y = train_gen[0]
    assert x.shape == (4, 16, 16, 3) and y.shape == (4, 16, 16, 1)
    assert set(np.unique(y)) == {0, 1, 2}

    model.compile(optimizer="rmsprop", loss="sparse_categorical_crossentropy")
    # "oxford_segmentation.h5" in the example: Keras 3 saves whole models as .keras
    callbacks = [keras.callbacks.ModelCheckpoint("oxford_segmentation.keras", save_best_only=True)]
    epochs = 2  # 15 in the example
    history = model.fit(train_gen, epochs=epochs, validation_data=val_gen, callbacks=callbacks,
                        verbose=0)
    assert_trains(history.history["loss"])
    assert os.path.exists("oxford_segmentation.keras")

    val_gen = OxfordPets(batch_size, img_size, val_input_img_paths, val_target_img_paths)
    val_preds = model.predict(val_gen, verbose=0)
    assert val_preds.shape == (4, 16, 16, 3)
    mask = np.expand_dims(np.argmax(val_preds[0], axis=-1), axis=-1)
    assert keras.utils.array_to_img(mask).size == (16, 16)


# -- vision/knowledge_distillation.py (Keras 3: the loss in compute_loss) ----------------------
def test_knowledge_distillation():
    from minikeras.keras import ops

    class Distiller(keras.Model):
        def __init__(self, student, teacher):
            super().__init__()
            self.teacher = teacher
            self.student = student

        def compile(self, optimizer, metrics, student_loss_fn, distillation_loss_fn, alpha=0.1,
                    temperature=3):
            super().compile(optimizer=optimizer, metrics=metrics)
            self.student_loss_fn = student_loss_fn
            self.distillation_loss_fn = distillation_loss_fn
            self.alpha = alpha
            self.temperature = temperature

        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                         allow_empty=False):
            teacher_pred = self.teacher(x, training=False)
            student_loss = self.student_loss_fn(y, y_pred)
            distillation_loss = self.distillation_loss_fn(
                ops.softmax(teacher_pred / self.temperature, axis=1),
                ops.softmax(y_pred / self.temperature, axis=1),
            ) * (self.temperature**2)
            loss = self.alpha * student_loss + (1 - self.alpha) * distillation_loss
            return loss

        def call(self, x):
            return self.student(x)

    # 256 and 512 teacher filters, 16 and 32 student filters in the example
    teacher = keras.Sequential(
        [
            keras.Input(shape=(28, 28, 1)),
            layers.Conv2D(32, (3, 3), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.MaxPooling2D(pool_size=(2, 2), strides=(1, 1), padding="same"),
            layers.Conv2D(32, (3, 3), strides=(2, 2), padding="same"),
            layers.Flatten(),
            layers.Dense(10),
        ],
        name="teacher",
    )
    student = keras.Sequential(
        [
            keras.Input(shape=(28, 28, 1)),
            layers.Conv2D(4, (3, 3), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.MaxPooling2D(pool_size=(2, 2), strides=(1, 1), padding="same"),
            layers.Conv2D(8, (3, 3), strides=(2, 2), padding="same"),
            layers.Flatten(),
            layers.Dense(10),
        ],
        name="student",
    )
    student_scratch = keras.models.clone_model(student)
    assert student_scratch.count_params() == student.count_params()

    # keras.datasets.mnist.load_data() -> 256 generated images whose class lights one band
    rng = np.random.default_rng(0)
    y_all = rng.integers(0, 10, 320).astype("uint8")
    x_all = rng.integers(0, 60, (320, 28, 28)).astype("uint8")
    for i, label in enumerate(y_all):
        x_all[i, 2 * label:2 * label + 3] = 255
    (x_train, y_train), (x_test, y_test) = (x_all[:256], y_all[:256]), (x_all[256:], y_all[256:])
    x_train = np.reshape(x_train.astype("float32") / 255.0, (-1, 28, 28, 1))
    x_test = np.reshape(x_test.astype("float32") / 255.0, (-1, 28, 28, 1))

    teacher.compile(optimizer=keras.optimizers.Adam(),
                    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                    metrics=[keras.metrics.SparseCategoricalAccuracy()])
    teacher_history = teacher.fit(x_train, y_train, epochs=2, verbose=0)  # 5 in the example
    teacher.evaluate(x_test, y_test, verbose=0)
    assert_trains(teacher_history.history["loss"])
    teacher_weights = [np.array(w) for w in teacher.weights]

    distiller = Distiller(student=student, teacher=teacher)
    distiller.compile(optimizer=keras.optimizers.Adam(),
                      metrics=[keras.metrics.SparseCategoricalAccuracy()],
                      student_loss_fn=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      distillation_loss_fn=keras.losses.KLDivergence(), alpha=0.1, temperature=10)
    history = distiller.fit(x_train, y_train, epochs=2, verbose=0)  # 3 in the example
    results = distiller.evaluate(x_test, y_test, verbose=0, return_dict=True)
    assert_trains(history.history["loss"])
    assert set(results) == {"loss", "sparse_categorical_accuracy"}
    # The teacher is a tracked sub-model, so its weights are among the distiller's trainable
    # weights and the loss reaches them through teacher_pred: Keras 3 on JAX moves the teacher
    # in this example too (training=False only sets the call mode), and so does minikeras.
    assert len(distiller.trainable_weights) == len(teacher.trainable_weights) + len(
        student.trainable_weights)
    assert any(not np.allclose(b, np.array(a)) for b, a in zip(teacher_weights, teacher.weights))
    # The loss is the example's formula on the student's and the teacher's logits
    x, y = x_test[:16], y_test[:16]
    t, s = ops.convert_to_numpy(teacher(x)) / 10, ops.convert_to_numpy(student(x))
    p_t = np.exp(t - t.max(1, keepdims=True))
    p_t /= p_t.sum(1, keepdims=True)
    p_s = np.exp(s / 10 - (s / 10).max(1, keepdims=True))
    p_s /= p_s.sum(1, keepdims=True)
    log_q = s - s.max(1, keepdims=True)
    log_q -= np.log(np.exp(log_q).sum(1, keepdims=True))
    student_loss = -log_q[np.arange(16), y].mean()
    kl = (np.clip(p_t, 1e-7, 1) * np.log(np.clip(p_t, 1e-7, 1) / np.clip(p_s, 1e-7, 1))).sum(1).mean()
    expected = 0.1 * student_loss + 0.9 * kl * 100
    got = distiller.compute_loss(x=x, y=y, y_pred=student(x))
    np.testing.assert_allclose(float(got), expected, rtol=1e-4)

    student_scratch.compile(optimizer=keras.optimizers.Adam(),
                            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                            metrics=[keras.metrics.SparseCategoricalAccuracy()])
    scratch_history = student_scratch.fit(x_train, y_train, epochs=2, verbose=0)  # 3 there
    student_scratch.evaluate(x_test, y_test, verbose=0)
    assert_trains(scratch_history.history["loss"])


# -- vision/mixup.py ---------------------------------------------------------------------------
def test_mixup_two_shuffled_datasets(tmp_path, monkeypatch):
    import minikeras as tf  # the example: import tensorflow as tf

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    # tf.keras.datasets.fashion_mnist.load_data() -> generated uint8 images, one lit band a class
    y_all = rng.integers(0, 10, 224).astype("uint8")
    x_all = rng.integers(0, 60, (224, 28, 28)).astype("uint8")
    for i, label in enumerate(y_all):
        x_all[i, 2 * label:2 * label + 3] = 255
    (x_train, y_train), (x_test, y_test) = (x_all[:192], y_all[:192]), (x_all[192:], y_all[192:])

    x_train = x_train.astype("float32") / 255.0
    x_train = np.reshape(x_train, (-1, 28, 28, 1))
    y_train = tf.one_hot(y_train, 10)
    x_test = x_test.astype("float32") / 255.0
    x_test = np.reshape(x_test, (-1, 28, 28, 1))
    y_test = tf.one_hot(y_test, 10)

    AUTO = tf.data.AUTOTUNE
    BATCH_SIZE = 32  # 64 in the example
    EPOCHS = 3  # 10 in the example

    val_samples = 32  # 2000 in the example
    x_val, y_val = x_train[:val_samples], y_train[:val_samples]
    new_x_train, new_y_train = x_train[val_samples:], y_train[val_samples:]
    train_ds_one = (tf.data.Dataset.from_tensor_slices((new_x_train, new_y_train))
                    .shuffle(BATCH_SIZE * 100).batch(BATCH_SIZE))
    train_ds_two = (tf.data.Dataset.from_tensor_slices((new_x_train, new_y_train))
                    .shuffle(BATCH_SIZE * 100).batch(BATCH_SIZE))
    train_ds = tf.data.Dataset.zip((train_ds_one, train_ds_two))
    val_ds = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(BATCH_SIZE)
    test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(BATCH_SIZE)

    def sample_beta_distribution(size, concentration_0=0.2, concentration_1=0.2):
        gamma_1_sample = tf.random.gamma(shape=[size], alpha=concentration_1)
        gamma_2_sample = tf.random.gamma(shape=[size], alpha=concentration_0)
        return gamma_1_sample / (gamma_1_sample + gamma_2_sample)

    def mix_up(ds_one, ds_two, alpha=0.2):
        images_one, labels_one = ds_one
        images_two, labels_two = ds_two
        batch_size = tf.shape(images_one)[0]
        l = sample_beta_distribution(batch_size, alpha, alpha)  # noqa: E741 (the example's name)
        x_l = tf.reshape(l, (batch_size, 1, 1, 1))
        y_l = tf.reshape(l, (batch_size, 1))
        images = images_one * x_l + images_two * (1 - x_l)
        labels = labels_one * y_l + labels_two * (1 - y_l)
        return (images, labels)

    train_ds_mu = train_ds.map(lambda ds_one, ds_two: mix_up(ds_one, ds_two, alpha=0.2),
                               num_parallel_calls=AUTO)
    sample_images, sample_labels = next(iter(train_ds_mu))
    sample_images, sample_labels = np.asarray(sample_images), np.asarray(sample_labels)
    assert sample_images.shape == (32, 28, 28, 1) and sample_labels.shape == (32, 10)
    # mixed labels: each row a convex combination of two one-hot rows
    np.testing.assert_allclose(sample_labels.sum(1), 1, rtol=1e-5)
    assert np.all(sample_labels >= 0) and np.any((sample_labels > 0.01) & (sample_labels < 0.99))

    def get_training_model():
        model = tf.keras.Sequential(
            [
                layers.Conv2D(8, (5, 5), activation="relu", input_shape=(28, 28, 1)),  # 16 there
                layers.MaxPooling2D(pool_size=(2, 2)),
                layers.Conv2D(16, (5, 5), activation="relu"),  # 32 there
                layers.MaxPooling2D(pool_size=(2, 2)),
                layers.Dropout(0.2),
                layers.GlobalAvgPool2D(),
                layers.Dense(32, activation="relu"),  # 128 there
                layers.Dense(10, activation="softmax"),
            ]
        )
        return model

    # "initial_weights.h5" in the example: Keras 3 names weight files *.weights.h5
    initial_model = get_training_model()
    initial_model.save_weights("initial_weights.weights.h5")

    model = get_training_model()
    model.load_weights("initial_weights.weights.h5")
    for a, b in zip(model.weights, initial_model.weights):
        np.testing.assert_array_equal(np.array(a), np.array(b))
    model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
    history = model.fit(train_ds_mu, validation_data=val_ds, epochs=EPOCHS, verbose=0)
    _, test_acc = model.evaluate(test_ds, verbose=0)
    assert_trains(history.history["loss"])
    assert 0 <= test_acc <= 1


# -- vision/convmixer.py (Keras 3: keras.optimizers.AdamW, a .weights.h5 checkpoint) -----------
def test_convmixer(tmp_path):
    import minikeras as tf  # the example: import tensorflow as tf

    learning_rate = 0.001
    weight_decay = 0.0001
    batch_size = 32  # 128 in the example
    num_epochs = 3  # 10 in the example

    # keras.datasets.cifar10.load_data() -> generated uint8 (n, 32, 32, 3) images, (n, 1) labels
    rng = np.random.default_rng(0)
    y_all = rng.integers(0, 10, (192, 1)).astype("uint8")
    x_all = rng.integers(0, 60, (192, 32, 32, 3)).astype("uint8")
    for i, label in enumerate(y_all[:, 0]):
        x_all[i, 3 * label:3 * label + 3] = 255
    (x_train, y_train), (x_test, y_test) = (x_all[:160], y_all[:160]), (x_all[160:], y_all[160:])
    val_split = 0.2  # 0.1 in the example
    val_indices = int(len(x_train) * val_split)
    new_x_train, new_y_train = x_train[val_indices:], y_train[val_indices:]
    x_val, y_val = x_train[:val_indices], y_train[:val_indices]

    image_size = 32
    auto = tf.data.AUTOTUNE
    data_augmentation = keras.Sequential(
        [layers.RandomCrop(image_size, image_size), layers.RandomFlip("horizontal")],
        name="data_augmentation",
    )

    def make_datasets(images, labels, is_train=False):
        dataset = tf.data.Dataset.from_tensor_slices((images, labels))
        if is_train:
            dataset = dataset.shuffle(batch_size * 10)
        dataset = dataset.batch(batch_size)
        if is_train:
            dataset = dataset.map(lambda x, y: (data_augmentation(x), y), num_parallel_calls=auto)
        return dataset.prefetch(auto)

    train_dataset = make_datasets(new_x_train, new_y_train, is_train=True)
    val_dataset = make_datasets(x_val, y_val)
    test_dataset = make_datasets(x_test, y_test)

    def activation_block(x):
        x = layers.Activation("gelu")(x)
        return layers.BatchNormalization()(x)

    def conv_stem(x, filters: int, patch_size: int):
        x = layers.Conv2D(filters, kernel_size=patch_size, strides=patch_size)(x)
        return activation_block(x)

    def conv_mixer_block(x, filters: int, kernel_size: int):
        x0 = x
        x = layers.Conv2D(filters, kernel_size=kernel_size, groups=filters, padding="same")(x)
        x = layers.Add()([activation_block(x), x0])
        x = layers.Conv2D(filters, kernel_size=1)(x)
        x = activation_block(x)
        return x

    def get_conv_mixer_256_8(image_size=32, filters=256, depth=8, kernel_size=5, patch_size=2,
                             num_classes=10):
        inputs = keras.Input((image_size, image_size, 3))
        x = layers.Rescaling(scale=1.0 / 255)(inputs)
        x = conv_stem(x, filters, patch_size)
        for _ in range(depth):
            x = conv_mixer_block(x, filters, kernel_size)
        x = layers.GlobalAvgPool2D()(x)
        outputs = layers.Dense(num_classes, activation="softmax")(x)
        return keras.Model(inputs, outputs)

    def run_experiment(model):
        optimizer = keras.optimizers.AdamW(learning_rate=learning_rate, weight_decay=weight_decay)
        model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"])
        checkpoint_filepath = str(tmp_path / "checkpoint.weights.h5")  # "/tmp/checkpoint" there
        checkpoint_callback = keras.callbacks.ModelCheckpoint(
            checkpoint_filepath, monitor="val_accuracy", save_best_only=True,
            save_weights_only=True)
        history = model.fit(train_dataset, validation_data=val_dataset, epochs=num_epochs,
                            callbacks=[checkpoint_callback], verbose=0)
        model.load_weights(checkpoint_filepath)
        _, accuracy = model.evaluate(test_dataset, verbose=0)
        return history, model, accuracy

    # ConvMixer-256/8 in the example; 16 filters and depth 2 here, kernel and patch sizes as there
    conv_mixer_model = get_conv_mixer_256_8(filters=16, depth=2)
    history, conv_mixer_model, accuracy = run_experiment(conv_mixer_model)
    assert_trains(history.history["loss"])
    assert 0 <= accuracy <= 1

    # The visualisation's look-ups: the patch embedding is layer 2, the depthwise kernels 5x5
    patch_embeddings = conv_mixer_model.layers[2].get_weights()[0]
    assert patch_embeddings.shape == (2, 2, 3, 16)
    depthwise = [i for i, layer in enumerate(conv_mixer_model.layers)
                 if isinstance(layer, layers.Conv2D) and layer.get_config()["kernel_size"] == (5, 5)]
    assert len(depthwise) == 2
    assert conv_mixer_model.layers[depthwise[0]].get_weights()[0].shape == (5, 5, 1, 16)


# -- structured_data/collaborative_filtering_movielens.py ---------------------------------------
def test_collaborative_filtering_movielens():
    import minikeras as tf  # the example: import tensorflow as tf

    # pd.read_csv(ratings.csv) -> generated (userId, movieId, rating) rows with the CSV's sparse
    # ids and half-star ratings; a user's taste times a movie's kind decides the rating
    rng = np.random.default_rng(0)
    user_ids_raw = rng.choice(np.arange(1, 1000), 40, replace=False)
    movie_ids_raw = rng.choice(np.arange(1, 200000), 60, replace=False)
    taste, kind = rng.choice([-1, 1], 40), rng.choice([-1, 1], 60)
    rows = [(u, m) for u in range(40) for m in range(60) if rng.random() < 0.5]
    user_col = np.array([user_ids_raw[u] for u, _ in rows])
    movie_col = np.array([movie_ids_raw[m] for _, m in rows])
    rating_col = np.array([3.0 + 1.5 * taste[u] * kind[m] + 0.5 * rng.integers(-1, 2)
                           for u, m in rows])

    # The example's pandas preprocessing, on NumPy columns
    user_ids = list(dict.fromkeys(user_col.tolist()))
    user2user_encoded = {x: i for i, x in enumerate(user_ids)}
    movie_ids = list(dict.fromkeys(movie_col.tolist()))
    movie2movie_encoded = {x: i for i, x in enumerate(movie_ids)}
    movie_encoded2movie = {i: x for i, x in enumerate(movie_ids)}
    user = np.array([user2user_encoded[x] for x in user_col])
    movie = np.array([movie2movie_encoded[x] for x in movie_col])
    num_users = len(user2user_encoded)
    num_movies = len(movie_encoded2movie)
    rating = rating_col.astype(np.float32)
    min_rating = min(rating)
    max_rating = max(rating)

    order = np.random.default_rng(42).permutation(len(rating))  # df.sample(frac=1)
    x = np.stack([user, movie], axis=1)[order]
    y = ((rating - min_rating) / (max_rating - min_rating))[order]
    train_indices = int(0.9 * len(y))
    x_train, x_test, y_train, y_test = (x[:train_indices], x[train_indices:], y[:train_indices],
                                        y[train_indices:])

    EMBEDDING_SIZE = 8  # 50 in the example

    class RecommenderNet(keras.Model):
        def __init__(self, num_users, num_movies, embedding_size, min_rating, max_rating,
                     **kwargs):
            super(RecommenderNet, self).__init__(**kwargs)
            self.num_users = num_users
            self.num_movies = num_movies
            self.embedding_size = embedding_size
            self.min_rating = min_rating
            self.max_rating = max_rating
            self.user_embedding = layers.Embedding(
                num_users, embedding_size, embeddings_initializer="he_normal",
                embeddings_regularizer=keras.regularizers.l2(1e-6))
            self.user_bias = layers.Embedding(num_users, 1)
            self.movie_embedding = layers.Embedding(
                num_movies, embedding_size, embeddings_initializer="he_normal",
                embeddings_regularizer=keras.regularizers.l2(1e-6))
            self.movie_bias = layers.Embedding(num_movies, 1)

        def call(self, inputs):
            user_vector = self.user_embedding(inputs[:, 0])
            user_bias = self.user_bias(inputs[:, 0])
            movie_vector = self.movie_embedding(inputs[:, 1])
            movie_bias = self.movie_bias(inputs[:, 1])
            dot_user_movie = layers.Dot(axes=1)([user_vector, movie_vector])
            x = dot_user_movie + user_bias + movie_bias
            x = tf.nn.sigmoid(x)
            return x

    inputs = layers.Input(shape=(2,))
    model = RecommenderNet(num_users, num_movies, EMBEDDING_SIZE, min_rating, max_rating)
    outputs = model(inputs)
    assert tuple(outputs.shape) == (None, 1)
    opt = keras.optimizers.Adam(learning_rate=0.01)  # Adam(lr=0.001): Keras 3 takes learning_rate
    model.compile(loss=tf.keras.losses.BinaryCrossentropy(), optimizer=opt)
    history = model.fit(x=x_train, y=y_train, batch_size=128, epochs=5, verbose=0,
                        validation_data=(x_test, y_test))
    assert_trains(history.history["loss"])
    assert_trains(history.history["val_loss"])
    assert len(model.losses) == 2  # the two embeddings' l2 penalties

    # Top recommendations for one user among the movies they have not rated
    user_id = user_col[0]
    movies_watched_by_user = movie_col[user_col == user_id]
    movies_not_watched = list(set(movie_ids) - set(movies_watched_by_user.tolist()))
    movies_not_watched = [[movie2movie_encoded.get(x)] for x in movies_not_watched]
    user_encoder = user2user_encoded.get(user_id)
    # [[user_id]] in the example: the raw id, past the embedding's rows; Keras 3's version encodes
    user_movie_array = np.hstack(([[user_encoder]] * len(movies_not_watched), movies_not_watched))
    ratings = model.predict(user_movie_array, verbose=0).flatten()
    assert ratings.shape == (len(movies_not_watched),)
    assert np.all((ratings > 0) & (ratings < 1))
    top_ratings_indices = ratings.argsort()[-10:][::-1]
    recommended_movie_ids = [movie_encoded2movie.get(x) for x in top_ratings_indices]
    assert len(recommended_movie_ids) == 10

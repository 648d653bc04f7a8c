"""keras.io's "Structured data classification with FeatureSpace" (keras-team/keras-io,
examples/structured_data/structured_data_classification_with_feature_space.py, Apache 2.0)
under ``from minikeras import keras``, as tests/test_keras_io_examples.py runs the others.

The example's Keras 3 code with the imports renamed (``import tensorflow as tf`` -> ``import
minikeras as tf``, ``from keras.utils import FeatureSpace`` -> ``from minikeras.keras.utils ...``),
fewer epochs, and pandas left out: the Cleveland heart-disease CSV it downloads
(storage.googleapis.com/download.tensorflow.org/data/heart.csv) cannot be downloaded on the
machines that run the tests, so a table with the same 14 columns, dtypes and value sets is
generated here (``heart_table``) and split as ``dataframe.sample(frac=0.2)`` splits it.
"""
import numpy as np

import minikeras as tf
from minikeras import keras
from minikeras.keras.utils import FeatureSpace

N_ROWS = 303  # the CSV's 303 patients


def heart_table(rng, n):
    """The CSV's columns: int64 codes and measurements, oldpeak float64, thal strings, the
    target depending on a few of them (so that the model has something to learn)."""
    table = {
        "age": rng.integers(29, 78, n), "sex": rng.integers(0, 2, n), "cp": rng.integers(0, 5, n),
        "trestbps": rng.integers(94, 201, n), "chol": rng.integers(126, 565, n), "fbs": rng.integers(0, 2, n),
        "restecg": rng.integers(0, 3, n), "thalach": rng.integers(71, 203, n), "exang": rng.integers(0, 2, n),
        "oldpeak": np.round(rng.uniform(0.0, 6.2, n), 1), "slope": rng.integers(1, 4, n), "ca": rng.integers(0, 4, n),
        "thal": rng.choice(np.array(["fixed", "normal", "reversible"]), n),
    }
    risk = table["exang"] + (table["thal"] == "reversible") + (table["oldpeak"] > 2) + (table["ca"] > 0)
    table["target"] = (risk + rng.uniform(0, 1, n) > 2).astype(np.int64)
    return table


def dataframe_to_dataset(dataframe):
    dataframe = dict(dataframe)  # the example's dataframe.copy()
    labels = dataframe.pop("target")
    ds = tf.data.Dataset.from_tensor_slices((dict(dataframe), labels))
    ds = ds.shuffle(buffer_size=len(labels))
    return ds


def test_structured_data_classification_with_feature_space():
    keras.utils.set_random_seed(1337)
    rng = np.random.default_rng(1337)
    dataframe = heart_table(rng, N_ROWS)
    val_rows = rng.permutation(N_ROWS)[: round(0.2 * N_ROWS)]  # dataframe.sample(frac=0.2, random_state=1337)
    train_rows = np.setdiff1d(np.arange(N_ROWS), val_rows)
    val_dataframe = {k: v[val_rows] for k, v in dataframe.items()}
    train_dataframe = {k: v[train_rows] for k, v in dataframe.items()}
    assert (len(train_rows), len(val_rows)) == (242, 61)

    train_ds = dataframe_to_dataset(train_dataframe)
    val_ds = dataframe_to_dataset(val_dataframe)
    for x, y in train_ds.take(1):
        assert sorted(x) == sorted(k for k in dataframe if k != "target") and y.shape == ()
    train_ds = train_ds.batch(32)
    val_ds = val_ds.batch(32)

    feature_space = FeatureSpace(
        features={
            # Categorical features encoded as integers
            "sex": FeatureSpace.integer_categorical(num_oov_indices=0),
            "cp": FeatureSpace.integer_categorical(num_oov_indices=0),
            "fbs": FeatureSpace.integer_categorical(num_oov_indices=0),
            "restecg": FeatureSpace.integer_categorical(num_oov_indices=0),
            "exang": FeatureSpace.integer_categorical(num_oov_indices=0),
            "ca": FeatureSpace.integer_categorical(num_oov_indices=0),
            # Categorical feature encoded as string
            "thal": FeatureSpace.string_categorical(num_oov_indices=0),
            # Numerical features to discretize
            "age": FeatureSpace.float_discretized(num_bins=30),
            # Numerical features to normalize
            "trestbps": FeatureSpace.float_normalized(),
            "chol": FeatureSpace.float_normalized(),
            "thalach": FeatureSpace.float_normalized(),
            "oldpeak": FeatureSpace.float_normalized(),
            "slope": FeatureSpace.float_normalized(),
        },
        # Specify feature cross with a custom crossing dim.
        crosses=[
            FeatureSpace.cross(feature_names=("sex", "age"), crossing_dim=64),
            FeatureSpace.cross(feature_names=("thal", "ca"), crossing_dim=16),
        ],
        output_mode="concat",
    )
    train_ds_with_no_labels = train_ds.map(lambda x, _: x)
    feature_space.adapt(train_ds_with_no_labels)

    # sex 2 + cp 5 + fbs 2 + restecg 3 + exang 2 + ca 4 + thal 3 + age 30 bins + 5 normalized + crosses 64 + 16:
    # 136, the size Keras 3.15 gives on this table
    dims = 2 + 5 + 2 + 3 + 2 + 4 + 3 + 30 + 5 + 64 + 16
    for x, _ in train_ds.take(1):
        preprocessed_x = feature_space(x)
        assert tuple(preprocessed_x.shape) == (32, dims) and preprocessed_x.dtype == "float32"

    preprocessed_train_ds = train_ds.map(lambda x, y: (feature_space(x), y), num_parallel_calls=tf.data.AUTOTUNE)
    preprocessed_train_ds = preprocessed_train_ds.prefetch(tf.data.AUTOTUNE)
    preprocessed_val_ds = val_ds.map(lambda x, y: (feature_space(x), y), num_parallel_calls=tf.data.AUTOTUNE)
    preprocessed_val_ds = preprocessed_val_ds.prefetch(tf.data.AUTOTUNE)

    dict_inputs = feature_space.get_inputs()
    encoded_features = feature_space.get_encoded_features()
    x = keras.layers.Dense(32, activation="relu")(encoded_features)
    x = keras.layers.Dropout(0.5)(x)
    predictions = keras.layers.Dense(1, activation="sigmoid")(x)
    training_model = keras.Model(inputs=encoded_features, outputs=predictions)
    training_model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    inference_model = keras.Model(inputs=dict_inputs, outputs=predictions)

    history = training_model.fit(preprocessed_train_ds, epochs=8, validation_data=preprocessed_val_ds, verbose=0)
    losses = history.history["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0], losses

    sample = {"age": 60, "sex": 1, "cp": 1, "trestbps": 145, "chol": 233, "fbs": 1, "restecg": 2, "thalach": 150,
              "exang": 0, "oldpeak": 2.3, "slope": 3, "ca": 0, "thal": "fixed"}
    input_dict = {name: tf.convert_to_tensor([value]) for name, value in sample.items()}
    predicted = inference_model.predict(input_dict, verbose=0)
    assert predicted.shape == (1, 1) and 0.0 < predicted[0][0] < 1.0
    # the end-to-end model equals the training model on the FeatureSpace's vector
    direct = training_model.predict(feature_space({k: [v] for k, v in sample.items()}), verbose=0)
    np.testing.assert_allclose(predicted, direct, atol=1e-5)

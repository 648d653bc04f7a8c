"""keras.io's "Structured data classification with FeatureSpace" and "FeatureSpace advanced use
cases" (keras-team/keras-io, examples/structured_data/structured_data_classification_with_feature_space.py
and feature_space_advanced.py, Apache 2.0) under ``from minikeras import keras``, as
tests/test_keras_io_examples.py runs the others.

The example's Keras 3 code with the imports renamed (``import tensorflow as tf`` -> ``import
minikeras as tf``, ``from keras.utils import FeatureSpace`` -> ``from minikeras.keras.utils ...``),
fewer epochs, and pandas left out: the Cleveland heart-disease CSV it downloads
(storage.googleapis.com/download.tensorflow.org/data/heart.csv) cannot be downloaded on the
machines that run the tests, so a table with the same 14 columns, dtypes and value sets is
generated here (``heart_table``) and split as ``dataframe.sample(frac=0.2)`` splits it. The
advanced example's bank-marketing CSV (archive.ics.uci.edu) likewise: ``bank_table`` has its
columns (``duration`` dropped and ``previously_contacted`` added, as the example does), fewer rows.
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


BANK_CATEGORIES = {
    "job": ["admin.", "blue-collar", "entrepreneur", "housemaid", "management", "retired", "self-employed",
            "services", "student", "technician", "unemployed", "unknown"],
    "marital": ["divorced", "married", "single", "unknown"],
    "education": ["basic.4y", "basic.6y", "basic.9y", "high.school", "illiterate", "professional.course",
                  "university.degree", "unknown"],
    "default": ["no", "unknown", "yes"], "housing": ["no", "unknown", "yes"], "loan": ["no", "unknown", "yes"],
    "contact": ["cellular", "telephone"],
    "month": ["apr", "aug", "dec", "jul", "jun", "mar", "may", "nov", "oct", "sep"],
    "day_of_week": ["fri", "mon", "thu", "tue", "wed"], "poutcome": ["failure", "nonexistent", "success"],
}


def bank_table(rng, n):
    """bank-additional.csv's columns after the example's edits: strings, int64 counts, float64
    rates; ``y`` is 'yes'/'no', more often 'yes' after a past success or with a cellular contact."""
    table = {name: rng.choice(np.array(values), n) for name, values in BANK_CATEGORIES.items()}
    table.update({
        "age": rng.integers(18, 89, n), "campaign": rng.integers(1, 36, n),
        "pdays": np.where(rng.uniform(size=n) < 0.9, 999, rng.integers(0, 22, n)), "previous": rng.integers(0, 7, n),
        "emp.var.rate": rng.choice(np.array([-3.4, -1.8, -0.1, 1.1, 1.4]), n),
        "cons.price.idx": np.round(rng.uniform(92.2, 94.8, n), 3),
        "cons.conf.idx": np.round(rng.uniform(-50.8, -26.9, n), 1), "euribor3m": np.round(rng.uniform(0.6, 5.0, n), 3),
        "nr.employed": rng.choice(np.array([4963.6, 5099.1, 5228.1]), n),
    })
    table["previously_contacted"] = np.where(table["pdays"] == 999, 0, 1)  # the example's new feature
    score = (table["poutcome"] == "success") + (table["contact"] == "cellular") + rng.uniform(0, 1, n)
    table["y"] = np.where(score > 1.6, "yes", "no")
    return table


def test_feature_space_advanced_use_cases(tmp_path):
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    n = 200
    dataframe = bank_table(rng, n)
    valid_rows = rng.permutation(n)[: round(0.2 * n)]  # dataframe.sample(frac=0.2, random_state=0)
    train_rows = np.setdiff1d(np.arange(n), valid_rows)
    valid_dataframe = {k: v[valid_rows] for k, v in dataframe.items()}
    train_dataframe = {k: v[train_rows] for k, v in dataframe.items()}

    label_lookup = keras.layers.StringLookup(
        # the order here is important since the first index will be encoded as 0
        vocabulary=["no", "yes"],
        num_oov_indices=0,
    )

    def encode_label(x, y):
        encoded_y = label_lookup(y)
        return x, encoded_y

    def dataframe_to_dataset(dataframe):
        dataframe = dict(dataframe)
        labels = dataframe.pop("y")
        ds = tf.data.Dataset.from_tensor_slices((dict(dataframe), labels))
        ds = ds.map(encode_label, num_parallel_calls=tf.data.AUTOTUNE)
        ds = ds.shuffle(buffer_size=len(labels))
        return ds

    train_ds = dataframe_to_dataset(train_dataframe)
    valid_ds = dataframe_to_dataset(valid_dataframe)
    for x, y in dataframe_to_dataset(train_dataframe).take(1):
        assert int(y) in (0, 1) and x["job"].shape == ()

    train_ds_with_no_labels = train_ds.map(lambda x, _: x)

    def example_feature_space(dataset, feature_space, feature_names):
        feature_space.adapt(dataset)
        for x in dataset.take(1):
            inputs = {feature_name: x[feature_name] for feature_name in feature_names}
            preprocessed_x = feature_space(inputs)
            return {k: v.numpy() for k, v in preprocessed_x.items()}

    out = example_feature_space(train_ds_with_no_labels, FeatureSpace(
        features={"campaign": FeatureSpace.integer_hashed(num_bins=4, output_mode="one_hot")}, output_mode="dict"),
        ["campaign"])
    assert out["campaign"].shape == (4,) and out["campaign"].sum() == 1
    out = example_feature_space(train_ds_with_no_labels, FeatureSpace(
        features={"education": FeatureSpace.string_hashed(num_bins=3, output_mode="one_hot")}, output_mode="dict"),
        ["education"])
    assert out["education"].shape == (3,)
    out = example_feature_space(train_ds_with_no_labels, FeatureSpace(
        features={"age": FeatureSpace.float_discretized(num_bins=3, output_mode="one_hot")}, output_mode="dict"),
        ["age"])
    assert out["age"].shape == (3,)
    out = example_feature_space(train_ds_with_no_labels, FeatureSpace(
        features={"default": FeatureSpace.string_categorical(num_oov_indices=1, output_mode="one_hot")},
        output_mode="dict"), ["default"])
    assert out["default"].shape == (4,)  # 3 values and the OOV index
    out = example_feature_space(train_ds_with_no_labels, FeatureSpace(
        features={"previously_contacted": FeatureSpace.integer_categorical(num_oov_indices=0, output_mode="one_hot")},
        output_mode="dict"), ["previously_contacted"])
    assert out["previously_contacted"].shape == (2,)
    out = example_feature_space(train_ds_with_no_labels, FeatureSpace(
        features={"age": FeatureSpace.integer_hashed(num_bins=6, output_mode="one_hot"),
                  "job": FeatureSpace.string_categorical(num_oov_indices=0, output_mode="one_hot")},
        crosses=[FeatureSpace.cross(feature_names=("age", "job"), crossing_dim=8, output_mode="one_hot")],
        output_mode="dict"), ["age", "job"])
    assert [out[k].shape for k in ("age", "job", "age_X_job")] == [(6,), (12,), (8,)]
    custom_layer = keras.layers.TextVectorization(output_mode="tf_idf")
    out = example_feature_space(train_ds_with_no_labels, FeatureSpace(
        features={"education": FeatureSpace.feature(preprocessor=custom_layer, dtype="string", output_mode="float")},
        output_mode="dict"), ["education"])
    assert out["education"].shape == (custom_layer.vocabulary_size(),)

    feature_space = FeatureSpace(
        features={
            "previously_contacted": FeatureSpace.integer_categorical(num_oov_indices=0),
            **{name: FeatureSpace.string_categorical(num_oov_indices=0)
               for name in ("marital", "education", "default", "housing", "loan", "contact", "month", "day_of_week",
                            "poutcome")},
            "job": FeatureSpace.string_hashed(num_bins=3),
            "pdays": FeatureSpace.integer_hashed(num_bins=4),
            "age": FeatureSpace.float_discretized(num_bins=4),
            **{name: FeatureSpace.float_normalized()
               for name in ("campaign", "previous", "emp.var.rate", "cons.price.idx", "cons.conf.idx", "euribor3m",
                            "nr.employed")},
        },
        crosses=[
            FeatureSpace.cross(feature_names=("age", "job"), crossing_dim=8),
            FeatureSpace.cross(feature_names=("housing", "loan"), crossing_dim=6),
            FeatureSpace.cross(feature_names=("poutcome", "previously_contacted"), crossing_dim=2),
        ],
        output_mode="concat",
    )
    train_ds = train_ds.batch(32)
    valid_ds = valid_ds.batch(32)
    train_ds_with_no_labels = train_ds.map(lambda x, _: x)
    feature_space.adapt(train_ds_with_no_labels)
    # 2 + 4 + 8 + 3 + 3 + 3 + 2 + 10 + 5 + 3 categories, job 3, pdays 4, age 4, 7 normalized, crosses 8 + 6 + 2:
    # 77, the size Keras 3.15 gives on this table
    dims = 2 + 4 + 8 + 3 + 3 + 3 + 2 + 10 + 5 + 3 + 3 + 4 + 4 + 7 + 8 + 6 + 2
    for x, _ in train_ds.take(1):
        preprocessed_x = feature_space(x)
        assert tuple(preprocessed_x.shape) == (32, dims)
    feature_space.save(str(tmp_path / "myfeaturespace.keras"))

    preprocessed_train_ds = train_ds.map(
        lambda x, y: (feature_space(x), y), num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
    preprocessed_valid_ds = valid_ds.map(
        lambda x, y: (feature_space(x), y), num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
    encoded_features = feature_space.get_encoded_features()
    x = keras.layers.Dense(64, activation="relu")(encoded_features)
    x = keras.layers.Dropout(0.5)(x)
    output = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inputs=encoded_features, outputs=output)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    history = model.fit(preprocessed_train_ds, validation_data=preprocessed_valid_ds, epochs=4, verbose=0)
    losses = history.history["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0], losses

    loaded_feature_space = keras.saving.load_model(str(tmp_path / "myfeaturespace.keras"))
    dict_inputs = loaded_feature_space.get_inputs()
    encoded_features = loaded_feature_space.get_encoded_features()
    outputs = model(encoded_features)
    inference_model = keras.Model(inputs=dict_inputs, outputs=outputs)
    sample = {"age": 30, "job": "blue-collar", "marital": "married", "education": "basic.9y", "default": "no",
              "housing": "yes", "loan": "no", "contact": "cellular", "month": "may", "day_of_week": "fri",
              "campaign": 2, "pdays": 999, "previous": 0, "poutcome": "nonexistent", "emp.var.rate": -1.8,
              "cons.price.idx": 92.893, "cons.conf.idx": -46.2, "euribor3m": 1.313, "nr.employed": 5099.1,
              "previously_contacted": 0}
    input_dict = {name: keras.ops.convert_to_tensor([value]) for name, value in sample.items()}
    predictions = inference_model.predict(input_dict, verbose=0)
    direct = model.predict(feature_space({k: [v] for k, v in sample.items()}), verbose=0)
    np.testing.assert_allclose(predictions, direct, atol=1e-5)  # the reloaded FeatureSpace encodes as the first

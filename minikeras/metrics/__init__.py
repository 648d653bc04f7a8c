"""Keras metrics (``mk.metrics``): streaming Mean/Sum, accuracies, errors, cross-entropies,
confusion-matrix counts, precision/recall, AUC, F-scores, IoU, R2, ``get``
(``keras.metrics.get``) and ``resolve`` (what ``compile(metrics=...)`` uses)."""
from minikeras.metrics.accuracy import (  # noqa: F401
    Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy, SparseTopKCategoricalAccuracy,
    TopKCategoricalAccuracy, accuracy, binary_accuracy, categorical_accuracy, sparse_categorical_accuracy,
    sparse_top_k_categorical_accuracy, top_k_categorical_accuracy)
from minikeras.metrics.auc import AUC  # noqa: F401
from minikeras.metrics.confusion import (  # noqa: F401
    FalseNegatives, FalsePositives, Precision, PrecisionAtRecall, Recall, RecallAtPrecision, SensitivityAtSpecificity,
    SpecificityAtSensitivity, TrueNegatives, TruePositives)
from minikeras.metrics.f_score import F1Score, FBetaScore  # noqa: F401
from minikeras.metrics.correlation import (  # noqa: F401
    ConcordanceCorrelation, PearsonCorrelation, concordance_correlation, pearson_correlation)
from minikeras.metrics.iou import IoU, BinaryIoU, MeanIoU, OneHotIoU, OneHotMeanIoU  # noqa: F401
from minikeras.metrics.loss_means import (  # noqa: F401
    CategoricalHinge, CosineSimilarity, Hinge, KLDivergence, LogCoshError, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, Poisson, SquaredHinge, binary_focal_crossentropy, categorical_focal_crossentropy,
    categorical_hinge, hinge, huber, kl_divergence, log_cosh, mean_absolute_percentage_error,
    mean_squared_logarithmic_error, poisson, squared_hinge)
from minikeras.metrics.r2 import R2Score  # noqa: F401
from minikeras.metrics.base import Mean, MeanMetricWrapper, Metric, Sum  # noqa: F401
from minikeras.metrics.lookup import (  # noqa: F401
    deserialize, get, kind_from_loss, kind_from_shapes, resolve, serialize)
from minikeras.metrics.regression import (  # noqa: F401
    BinaryCrossentropy, CategoricalCrossentropy, MeanAbsoluteError, MeanSquaredError, RootMeanSquaredError,
    SparseCategoricalCrossentropy, binary_crossentropy, categorical_crossentropy, mean_absolute_error,
    mean_squared_error, sparse_categorical_crossentropy)

mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error

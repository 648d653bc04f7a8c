"""``keras.distillation``: Keras 3.15's knowledge distillation, a ``Distiller`` model that trains a
student on the true labels and on a frozen teacher's outputs (``LogitsDistillation``) or
intermediate features (``FeatureDistillation``).

    distiller = keras.distillation.Distiller(teacher, student, keras.distillation.LogitsDistillation(temperature=3.0),
                                             student_loss_weight=0.5)
    distiller.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    distiller.fit(x, y)
"""
from minikeras.keras.distillation.distillation_loss import (  # noqa: F401
    DistillationLoss, FeatureDistillation, LogitsDistillation)
from minikeras.keras.distillation.distiller import Distiller  # noqa: F401

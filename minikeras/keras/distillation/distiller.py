"""Keras 3.15's ``Distiller``: a Model whose ``call`` is the student's and whose ``compute_loss``
mixes the student's loss on the labels with distillation losses against a frozen teacher."""
from minikeras import losses, metrics
from minikeras.keras import ops, tree
from minikeras.models import Model, Sequential
from minikeras.saving.registry import deserialize_keras_object, register_builtin, serialize_keras_object


def _loss_function(loss):
    return losses.get(loss) if isinstance(loss, str) else loss


def _check_shapes(teacher_shape, student_shape, context):
    teacher_shape, student_shape = tuple(teacher_shape), tuple(student_shape)
    if len(teacher_shape) != len(student_shape):
        raise ValueError(f"Teacher and student {context} shapes have different dimensions. Teacher: {teacher_shape}, "
                         f"Student: {student_shape}.")
    if any(a is not None and b is not None and a != b for a, b in zip(teacher_shape, student_shape)):
        raise ValueError(f"Teacher and student {context} shapes are incompatible. Teacher: {teacher_shape}, Student: "
                         f"{student_shape}. All dimensions must match.")


def _check_dtypes(teacher_dtype, student_dtype, context):
    if teacher_dtype != student_dtype:
        raise ValueError(f"Teacher and student {context} dtypes must match. Teacher: {teacher_dtype}, Student: "
                         f"{student_dtype}.")


@register_builtin("minikeras.distillation")
class Distiller(Model):
    """Trains ``student`` to match ``teacher`` (frozen: ``teacher.trainable = False``) as well as
    the labels: the loss is ``student_loss_weight * student_loss + (1 - student_loss_weight) *
    sum(weight_i * distillation_loss_i)``, where the student loss is ``compile``'s ``loss`` on
    ``(y, student(x))`` and each distillation loss compares the teacher's outputs (or a named
    layer's, ``FeatureDistillation``) with the student's on the same ``x``.

    Args:
      teacher, student: ``keras.Model``s with matching input and output shapes and dtypes
        (where both are functional).
      distillation_losses: a DistillationLoss or a list of them.
      distillation_loss_weights: one weight per loss (default all 1.0).
      student_loss_weight: in [0, 1] (0.5).

    ``fit`` logs ``loss`` with ``student_loss``, ``distillation_loss`` and ``total_loss``;
    ``predict`` and calling the distiller run the student.
    """

    def __init__(self, teacher, student, distillation_losses, distillation_loss_weights=None, student_loss_weight=0.5,
                 name="distiller", trainable=True, dtype=None, **kwargs):
        super().__init__(name=name, trainable=trainable, dtype=dtype, **kwargs)
        self._validate_models(teacher, student)
        self.teacher = teacher
        self.student = student
        if not isinstance(student_loss_weight, (int, float)) or isinstance(student_loss_weight, bool):
            raise ValueError(f"student_loss_weight must be a number, got {type(student_loss_weight)}")
        if student_loss_weight < 0.0 or student_loss_weight > 1.0:
            raise ValueError(f"student_loss_weight must be between 0.0 and 1.0, got {student_loss_weight}")
        self.student_loss_weight = student_loss_weight
        if distillation_losses is None:
            raise ValueError("'distillation_losses' cannot be `None`. Provide a distillation loss (e.g., "
                             "LogitsDistillation or FeatureDistillation) or a list of distillation losses.")
        if not isinstance(distillation_losses, (list, tuple)):
            distillation_losses, distillation_loss_weights = [distillation_losses], [1.0]
        elif distillation_loss_weights is None:
            distillation_loss_weights = [1.0] * len(distillation_losses)
        elif len(distillation_loss_weights) != len(distillation_losses):
            raise ValueError(f"Number of distillation_loss_weights ({len(distillation_loss_weights)}) must match "
                             f"number of distillation_losses ({len(distillation_losses)})")
        self.distillation_losses = list(distillation_losses)
        self.distillation_loss_weights = list(distillation_loss_weights)
        for distillation_loss in self.distillation_losses:
            distillation_loss.validate_model_compatibility(teacher, student)
        self._teacher_features = self._feature_extractor(teacher, "teacher_layer_name")
        self._student_features = self._feature_extractor(student, "student_layer_name")
        self.teacher.trainable = False
        self.student_loss_tracker = metrics.Mean(name="student_loss")
        self.distillation_loss_tracker = metrics.Mean(name="distillation_loss")
        self.total_loss_tracker = metrics.Mean(name="total_loss")

    def _validate_models(self, teacher, student):
        for role, model in (("Teacher", teacher), ("Student", student)):
            if not isinstance(model, Model):
                raise ValueError(f"{role} must be a keras.Model, got {type(model)}")
        for attribute, context in (("inputs", "input"), ("outputs", "output")):
            ours, theirs = getattr(teacher, attribute, None), getattr(student, attribute, None)
            if ours is None or theirs is None:
                continue
            tree.map_structure(lambda t, s, c=context: _check_shapes(t.shape, s.shape, c), ours, theirs)
        for attribute, context in (("inputs", "input"), ("outputs", "output")):
            ours, theirs = getattr(teacher, attribute, None), getattr(student, attribute, None)
            if ours is None or theirs is None:
                return
            tree.map_structure(lambda t, s, c=context: _check_dtypes(t.dtype, s.dtype, c), ours, theirs)

    def _feature_extractor(self, model, attribute):
        """A functional model giving ``final_output`` and the named layers' outputs, or None."""
        names = []
        for distillation_loss in self.distillation_losses:
            name = getattr(distillation_loss, attribute, None)
            if name and name not in names:
                names.append(name)
        if not names:
            return None
        if getattr(model, "inputs", None) is None:
            raise ValueError(f"Cannot create feature extractor for {model.name}. The model has no symbolic inputs "
                             "attribute.")
        final = model.layers[-1].output if isinstance(model, Sequential) else model.output
        outputs = {"final_output": final, **{name: model.get_layer(name=name).output for name in names}}
        return Model(inputs=model.inputs, outputs=outputs, name=f"{model.name}_multi_feature_extractor")

    def compile(self, optimizer="adam", loss=None, metrics=None, **kwargs):
        """As ``Model.compile``, ``loss`` (required) being the student's loss on the labels."""
        if loss is None:
            raise ValueError("'loss' cannot be `None`.")
        self._student_loss = tree.map_structure(_loss_function, loss)
        self._student_loss_for_serialization = loss
        if metrics is not None and not isinstance(metrics, (list, tuple)):
            raise ValueError(f"metrics must be a list or tuple, got {type(metrics)}")
        super().compile(optimizer=optimizer, loss=None, metrics=metrics, **kwargs)

    def call(self, inputs, training=None, **kwargs):
        return self.student(inputs, training=training, **kwargs)

    def _features(self, loss, features, attribute, fallback):
        name = getattr(loss, attribute, None)
        if name is None:
            return fallback
        if name not in features:
            raise ValueError(f"Layer '{name}' not found in extracted features. Available: {list(features)}")
        return features[name]

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if y_pred is None:
            y_pred = self(x, training=training)
        student_loss = 0.0
        if self.student_loss_weight > 0.0 and y is not None:
            values = tree.flatten(tree.map_structure(lambda fn, target, pred: fn(target, pred), self._student_loss,
                                                     y, y_pred))
            student_loss = ops.sum(ops.stack(values)) if len(values) > 1 else values[0]
            if len(getattr(student_loss, "shape", ())) > 0:
                student_loss = ops.mean(student_loss)
        distillation_loss = 0.0
        if self.student_loss_weight < 1.0:
            teacher = (self._teacher_features(x, training=False) if self._teacher_features is not None
                       else {"final_output": self.teacher(x, training=False)})
            student = (self._student_features(x, training=True) if self._student_features is not None
                       else {"final_output": y_pred})
            for loss, weight in zip(self.distillation_losses, self.distillation_loss_weights):
                if getattr(loss, "teacher_layer_name", None) is not None:
                    try:
                        teacher_out = self._features(loss, teacher, "teacher_layer_name", teacher["final_output"])
                        student_out = self._features(loss, student, "student_layer_name", student["final_output"])
                    except ValueError as e:
                        raise RuntimeError(
                            f"Failed to extract features for {type(loss).__name__} targeting teacher layer "
                            f"'{loss.teacher_layer_name}' and student layer '{loss.student_layer_name}'. Original "
                            f"error: {e}") from e
                else:
                    teacher_out, student_out = teacher["final_output"], y_pred
                loss.validate_outputs(teacher_out, student_out)
                value = loss.compute_loss(teacher_out, student_out)
                if len(getattr(value, "shape", ())) > 0:
                    raise ValueError(f"Distillation loss {type(loss).__name__} returned a non-scalar loss with shape "
                                     f"{tuple(value.shape)}. The compute_loss method must return a scalar tensor.")
                distillation_loss = ops.add(distillation_loss, ops.multiply(weight, value))
        total_loss = ops.add(ops.multiply(self.student_loss_weight, student_loss),
                             ops.multiply(1.0 - self.student_loss_weight, distillation_loss))
        self.student_loss_tracker.update_state(student_loss)
        self.distillation_loss_tracker.update_state(distillation_loss)
        self.total_loss_tracker.update_state(total_loss)
        return total_loss

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable, "teacher": serialize_keras_object(self.teacher),
                "student": serialize_keras_object(self.student),
                "distillation_losses": [serialize_keras_object(loss) for loss in self.distillation_losses],
                "distillation_loss_weights": self.distillation_loss_weights,
                "student_loss_weight": self.student_loss_weight}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        for key in ("teacher", "student"):
            config[key] = deserialize_keras_object(config[key], custom_objects)
        config["distillation_losses"] = [deserialize_keras_object(loss, custom_objects)
                                         for loss in config["distillation_losses"]]
        return cls(**config)

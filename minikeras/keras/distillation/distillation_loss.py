"""Keras 3.15's distillation losses: how a Distiller compares the teacher's outputs with the
student's (``LogitsDistillation``: temperature-softened logits; ``FeatureDistillation``: the
outputs of named intermediate layers)."""
from minikeras import losses
from minikeras.keras import ops, tree
from minikeras.saving.registry import deserialize_keras_object, register_builtin, serialize_keras_object


def _loss_function(loss):
    if loss is None:
        return None
    if isinstance(loss, str):
        return losses.get(loss)
    return loss


def _serialize_losses(loss):
    """Loss objects as ``keras.losses.serialize`` writes them, functions by name, in the loss's structure."""
    if isinstance(loss, (list, tuple)):
        return [_serialize_losses(item) for item in loss]
    if isinstance(loss, dict):
        return {key: _serialize_losses(item) for key, item in loss.items()}
    if isinstance(loss, losses.Loss):
        return losses.serialize(loss)
    return serialize_keras_object(loss)


def _deserialize_losses(config):
    if isinstance(config, (list, tuple)):
        return [_deserialize_losses(item) for item in config]
    if isinstance(config, dict) and "class_name" not in config:
        return {key: _deserialize_losses(item) for key, item in config.items()}
    if isinstance(config, dict) and config["class_name"] != "function":
        return losses.deserialize(config)
    return deserialize_keras_object(config) if config is not None else None


def _sum_of_means(loss_values):
    return ops.sum(ops.stack([ops.convert_to_tensor(v, "float32") for v in tree.flatten(loss_values)]))


@register_builtin("minikeras.distillation")
class DistillationLoss:
    """The base of a distillation loss: ``compute_loss(teacher_outputs, student_outputs)`` returns
    a scalar; ``validate_outputs`` checks the two structures match; ``validate_model_compatibility``
    checks the models when the Distiller is made."""

    def compute_loss(self, teacher_outputs, student_outputs, **kwargs):
        raise NotImplementedError("Subclasses must implement compute_loss")

    def validate_outputs(self, teacher_outputs, student_outputs):
        tree.assert_same_structure(teacher_outputs, student_outputs)

    def validate_model_compatibility(self, teacher, student):
        pass

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["loss"] = _deserialize_losses(config["loss"])
        return cls(**config)


@register_builtin("minikeras.distillation")
class LogitsDistillation(DistillationLoss):
    """The teacher's and student's logits divided by ``temperature``, compared by ``loss``: a
    ``keras.losses.KLDivergence`` instance on their softmaxes, times temperature² (Hinton et al.
    2015's scaling); any other loss, the default 'kl_divergence' name included (a function, as in
    Keras 3.15), on the scaled logits themselves. ``loss`` may be a structure matching the
    outputs', None where an output is not compared."""

    def __init__(self, temperature=3.0, loss="kl_divergence"):
        self.temperature = temperature
        self.loss = tree.map_structure(_loss_function, loss)
        if all(item is None for item in tree.flatten(self.loss)):
            raise ValueError("At least one loss must be non-`None`.")
        if not isinstance(self.temperature, (int, float)) or isinstance(self.temperature, bool):
            raise ValueError(f"temperature must be a number, got {type(self.temperature)}")
        if self.temperature <= 0.0:
            raise ValueError("temperature must be positive.")

    def compute_loss(self, teacher_outputs, student_outputs, **kwargs):
        t = self.temperature

        def apply(loss_fn, teacher_logits, student_logits):
            if loss_fn is None:
                return 0.0
            teacher_logits, student_logits = ops.divide(teacher_logits, t), ops.divide(student_logits, t)
            if isinstance(loss_fn, losses.KLDivergence):
                value = loss_fn(ops.softmax(teacher_logits, axis=-1), ops.softmax(student_logits, axis=-1))
                return ops.mean(value) * (t ** 2)
            return ops.mean(loss_fn(teacher_logits, student_logits))
        return _sum_of_means(tree.map_structure(apply, self.loss, teacher_outputs, student_outputs))

    def get_config(self):
        return {"temperature": self.temperature, "loss": _serialize_losses(self.loss)}


@register_builtin("minikeras.distillation")
class FeatureDistillation(DistillationLoss):
    """``loss`` ('mse' by default) between the outputs of the teacher's layer
    ``teacher_layer_name`` and the student's ``student_layer_name`` (the models' final outputs
    where None); named layers need Functional or Sequential models with matching feature shapes."""

    def __init__(self, loss="mse", teacher_layer_name=None, student_layer_name=None):
        self.teacher_layer_name = teacher_layer_name
        self.student_layer_name = student_layer_name
        self.loss = tree.map_structure(_loss_function, loss)
        if all(item is None for item in tree.flatten(self.loss)):
            raise ValueError("The `loss` argument in `FeatureDistillation` must contain at least one non-`None` value.")

    def validate_model_compatibility(self, teacher, student):
        if self.teacher_layer_name is not None or self.student_layer_name is not None:
            subclassed = [role for role, model in (("teacher", teacher), ("student", student))
                          if getattr(model, "inputs", None) is None]
            if subclassed:
                raise ValueError(
                    f"FeatureDistillation with specific layer names requires Functional or Sequential models. The "
                    f"{' and '.join(subclassed)} model(s) appear to be subclassed (no symbolic inputs/outputs). Either "
                    "use Functional/Sequential models, or use FeatureDistillation without layer names (to distill "
                    "final outputs only), or use LogitsDistillation instead.")
        for role, model, name in (("teacher", teacher, self.teacher_layer_name),
                                  ("student", student, self.student_layer_name)):
            if name is not None:
                try:
                    model.get_layer(name=name)
                except ValueError as e:
                    raise ValueError(f"In {role} model: {e}") from None

    def validate_outputs(self, teacher_outputs, student_outputs):
        super().validate_outputs(teacher_outputs, student_outputs)
        try:
            tree.assert_same_structure(self.loss, teacher_outputs)
        except ValueError as e:
            raise ValueError(f"Loss structure mismatch. Loss structure: {self.loss}, Output structure: "
                             f"{teacher_outputs}. Error: {e}") from None

    def compute_loss(self, teacher_outputs, student_outputs, **kwargs):
        def apply(loss_fn, teacher_features, student_features):
            return 0.0 if loss_fn is None else ops.mean(loss_fn(teacher_features, student_features))
        return _sum_of_means(tree.map_structure(apply, self.loss, teacher_outputs, student_outputs))

    def get_config(self):
        return {"loss": _serialize_losses(self.loss), "teacher_layer_name": self.teacher_layer_name,
                "student_layer_name": self.student_layer_name}

"""FTRL-Proximal (McMahan et al. 2013, "Ad Click Prediction: a View from the Trenches"), Keras 3's
update rule with its online L2 and shrinkage-type L2 regularization."""
from minikeras import initializers
from minikeras.ops.clip import clip_by_value
from minikeras.ops.math import cast, pow, square
from minikeras.optimizers.base import Optimizer


class Ftrl(Optimizer):
    """Follow The Regularized Leader. Per variable, with accumulator ``n`` and linear term ``z``::

        g_s = g + 2 * l2_shrinkage * var
        n_new = n + g^2
        z += g_s - (n_new^-p - n^-p) / lr * var          # p = learning_rate_power
        var = (clip(z, -l1, l1) - z) / (n_new^-p / lr + 2 * (l2 + beta / (2 * lr)))
        n = n_new

    Args:
      learning_rate: float, schedule or callable (default 0.001).
      learning_rate_power: how the rate decays, <= 0 (-0.5; 0 for a fixed rate).
      initial_accumulator_value: the accumulators' start, >= 0 (0.1).
      l1_regularization_strength, l2_regularization_strength: >= 0 (0.0).
      l2_shrinkage_regularization_strength: an L2 penalty added to the gradient, >= 0 (0.0).
      beta: the paper's beta (0.0).
      Other arguments as ``mk.optimizers.Optimizer``.
    """

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        for name, value in (("initial_accumulator_value", initial_accumulator_value),
                            ("l1_regularization_strength", l1_regularization_strength),
                            ("l2_regularization_strength", l2_regularization_strength),
                            ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength)):
            if value < 0.0:
                raise ValueError(f"`{name}` needs to be positive or zero. Received: {name}={value}.")
        if learning_rate_power > 0.0:
            raise ValueError(f"`learning_rate_power` needs to be negative or zero. Received: "
                             f"learning_rate_power={learning_rate_power}.")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._accumulators, self._linears = self.add_optimizer_variables(
            var_list, ["accumulator", "linear"],
            initializer=[initializers.Constant(self.initial_accumulator_value), "zeros"])

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        lr = cast(learning_rate, dtype)
        gradient = cast(gradient, dtype)
        index = self._get_variable_index(variable)
        accum, linear = self._accumulators[index], self._linears[index]
        power = -self.learning_rate_power
        l2 = self.l2_regularization_strength + self.beta / (2.0 * lr)
        grad_to_use = gradient + 2 * self.l2_shrinkage_regularization_strength * variable
        new_accum = accum + square(gradient)
        self.assign_add(linear, grad_to_use - (pow(new_accum, power) - pow(accum, power)) / lr * variable)
        quadratic = pow(new_accum, power) / lr + 2 * l2
        l1 = self.l1_regularization_strength
        self.assign(variable, (clip_by_value(linear, -l1, l1) - linear) / quadratic)
        self.assign(accum, new_accum)

    def get_config(self):
        return {**super().get_config(), "learning_rate_power": self.learning_rate_power,
                "initial_accumulator_value": self.initial_accumulator_value,
                "l1_regularization_strength": self.l1_regularization_strength,
                "l2_regularization_strength": self.l2_regularization_strength,
                "l2_shrinkage_regularization_strength": self.l2_shrinkage_regularization_strength, "beta": self.beta}

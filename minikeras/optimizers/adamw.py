"""AdamW: Adam with decoupled weight decay, Keras 3's update rule."""
from minikeras.optimizers.adam import Adam


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): each step first shrinks every
    variable, ``var -= var * weight_decay * lr``, then applies Adam's update (see ``Adam``).

    Exclude variables (e.g. biases) with ``exclude_from_weight_decay(var_names=['bias'])``.

    Args:
      learning_rate: float, schedule or callable (default 0.001).
      weight_decay: float (default 0.004); None is an error.
      beta_1, beta_2, epsilon, amsgrad: as ``Adam`` (0.9, 0.999, 1e-7, False).
      Other arguments as ``mk.optimizers.Optimizer``.
    """

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, amsgrad=amsgrad,
                         weight_decay=weight_decay, **kwargs)
        if self.weight_decay is None:
            raise ValueError(f"Argument `weight_decay` must be a float. Received: weight_decay={self.weight_decay}")

"""``SwapEMAWeights``: evaluate and predict with the optimizer's moving averages of the weights."""
import numpy as np

from minikeras.callbacks.callback import Callback


class SwapEMAWeights(Callback):
    """Swaps the model's weights with the optimizer's exponential moving averages of them
    (``use_ema=True``) for evaluation and prediction, and back afterwards, as Keras 3's.

    Args:
      swap_on_epoch: also keep the averages in the model between epochs (swapped in at each
        epoch's end, so that callbacks such as ``ModelCheckpoint`` save them, and back at the next
        epoch's start); after the last epoch ``fit`` leaves the averages in the model.

    >>> model.compile(optimizer=mk.optimizers.SGD(use_ema=True), loss="mse")
    >>> model.fit(x, y, validation_data=(xv, yv), callbacks=[mk.callbacks.SwapEMAWeights()])
    """

    def __init__(self, swap_on_epoch=False):
        super().__init__()
        self.swap_on_epoch = swap_on_epoch
        self._ema_weights_in_model = False

    def _pairs(self):
        return self.model.optimizer.moving_averages()

    def _swap_variables(self):
        for variable, average in self._pairs():
            held = np.asarray(variable.numpy())
            variable.assign(average)
            average.assign(held)

    def _finalize_ema_values(self):
        for variable, average in self._pairs():
            average.assign(variable)

    def on_epoch_begin(self, epoch, logs=None):
        if self.swap_on_epoch and self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_epoch_end(self, epoch, logs=None):
        if self.swap_on_epoch and not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True
            # fit ends by copying the averages into the model: after the last epoch they must be
            # the averages again, not the raw weights swapped into their place
            if epoch == self.params["epochs"] - 1:
                self._finalize_ema_values()

    def on_test_begin(self, logs=None):
        if not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True

    def on_test_end(self, logs=None):
        if self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_predict_begin(self, logs=None):
        if not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True

    def on_predict_end(self, logs=None):
        if not self._ema_weights_in_model:  # Keras 3.15's condition: the averages stay in the model
            self._swap_variables()
            self._ema_weights_in_model = False

"""TargetReshaper: 1-D targets to one column and back, for encoders that take 2-D input."""
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted


class TargetReshaper(TransformerMixin, BaseEstimator):
    """Makes a 1-D ``y`` a column (``transform``) and squeezes a one-column result back to 1-D
    when it was fitted on a 1-D ``y`` (``inverse_transform``), as Keras 3's."""

    def fit(self, y):
        self.ndim_ = y.ndim
        return self

    def transform(self, y):
        return y.reshape(-1, 1) if y.ndim == 1 else y

    def inverse_transform(self, y):
        check_is_fitted(self)
        if self.ndim_ == 1 and y.ndim == 2:
            return np.squeeze(y, axis=1)
        return y

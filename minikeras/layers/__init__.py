"""Keras layers (``mk.layers``)."""
import sys

from minikeras.layers.base import Layer  # noqa: F401
from minikeras.layers.input_spec import InputSpec  # noqa: F401
from minikeras.layers.core.wrapper import Wrapper  # noqa: F401
from minikeras.layers.activations.activation_layers import ELU, LeakyReLU, ReLU, Softmax  # noqa: F401
from minikeras.layers.attention.attention import AdditiveAttention, Attention  # noqa: F401
from minikeras.layers.convolutional.conv2d import Conv2D  # noqa: F401
from minikeras.layers.convolutional.conv1d import Conv1D  # noqa: F401
from minikeras.layers.convolutional.conv_transpose import Conv1DTranspose, Conv2DTranspose, Conv3DTranspose  # noqa: F401
from minikeras.layers.convolutional.conv3d import Conv3D  # noqa: F401
from minikeras.layers.convolutional.depthwise_conv import DepthwiseConv1D, DepthwiseConv2D  # noqa: F401
from minikeras.layers.convolutional.separable_conv import SeparableConv1D, SeparableConv2D  # noqa: F401
from minikeras.layers.activations.prelu import PReLU  # noqa: F401
from minikeras.layers.activations.activation import Activation  # noqa: F401
from minikeras.layers.core.dense import Dense  # noqa: F401
from minikeras.layers.regularization.dropout import Dropout  # noqa: F401
from minikeras.layers.reshaping.flatten import Flatten  # noqa: F401
from minikeras.layers.reshaping.reshape import Reshape  # noqa: F401
from minikeras.layers.core.einsum_dense import EinsumDense  # noqa: F401
from minikeras.layers.core.embedding import Embedding  # noqa: F401
from minikeras.layers.core.reversible_embedding import ReversibleEmbedding  # noqa: F401
from minikeras.layers.core.input_layer import Input, InputLayer  # noqa: F401
from minikeras.layers.core.masking import Masking  # noqa: F401
from minikeras.layers.merging.merge import (  # noqa: F401
    Add, Average, Concatenate, Dot, Maximum, Merge, Minimum, Multiply, Subtract, add, average, concatenate, dot,
    maximum, minimum, multiply, subtract)
from minikeras.layers.normalization.layer_normalization import LayerNormalization  # noqa: F401
from minikeras.layers.attention.multi_head_attention import MultiHeadAttention  # noqa: F401
from minikeras.layers.attention.group_query_attention import (  # noqa: F401
    GroupedQueryAttention as GroupQueryAttention)
from minikeras.layers.normalization.batch_normalization import BatchNormalization  # noqa: F401
from minikeras.layers.pooling.max_pooling import (  # noqa: F401
    MaxPool1D, MaxPool2D, MaxPool3D, MaxPooling1D, MaxPooling2D, MaxPooling3D)
from minikeras.layers.pooling.average_pooling import (  # noqa: F401
    AveragePooling1D, AveragePooling2D, AveragePooling3D, AvgPool1D, AvgPool2D, AvgPool3D)
from minikeras.layers.pooling.global_pooling import (  # noqa: F401
    GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalAveragePooling3D, GlobalAvgPool1D, GlobalAvgPool2D,
    GlobalAvgPool3D, GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D, GlobalMaxPooling1D, GlobalMaxPooling2D,
    GlobalMaxPooling3D)
from minikeras.layers.pooling.adaptive_pooling import (  # noqa: F401
    AdaptiveAveragePooling1D, AdaptiveAveragePooling2D, AdaptiveAveragePooling3D, AdaptiveMaxPooling1D,
    AdaptiveMaxPooling2D, AdaptiveMaxPooling3D)
from minikeras.layers.rnn.conv_lstm import ConvLSTM1D, ConvLSTM2D, ConvLSTM3D  # noqa: F401
from minikeras.layers.rnn.recurrent import GRU, LSTM, SimpleRNN  # noqa: F401
from minikeras.layers.rnn.rnn import RNN  # noqa: F401
from minikeras.layers.rnn.rnn_cells import GRUCell, LSTMCell, SimpleRNNCell  # noqa: F401
from minikeras.layers.rnn.stacked_cells import StackedRNNCells  # noqa: F401
from minikeras.layers.rnn.wrappers import Bidirectional, TimeDistributed  # noqa: F401
from minikeras.layers.preprocessing.category_encoding import CategoryEncoding  # noqa: F401
from minikeras.layers.preprocessing.discretization import Discretization  # noqa: F401
from minikeras.layers.preprocessing.hashing import Hashing  # noqa: F401
from minikeras.layers.preprocessing.hashed_crossing import HashedCrossing  # noqa: F401
from minikeras.layers.preprocessing.audio import MelSpectrogram, STFTSpectrogram  # noqa: F401
from minikeras.layers.preprocessing.integer_lookup import IntegerLookup  # noqa: F401
from minikeras.layers.preprocessing.normalization import Normalization  # noqa: F401
from minikeras.layers.preprocessing.string_lookup import StringLookup  # noqa: F401
from minikeras.layers.preprocessing.text_vectorization import TextVectorization  # noqa: F401
from minikeras.layers.preprocessing import (  # noqa: F401
    CenterCrop, CutMix, MaxNumBoundingBoxes, MixUp, Pipeline, RandomBrightness, RandomContrast, RandomCrop,
    RandomElasticTransform, RandomErasing, RandomFlip, RandomGaussianBlur, RandomPerspective, RandomRotation,
    RandomShear, RandomTranslation, RandomZoom, Resizing)
from minikeras.layers.preprocessing import (  # noqa: F401
    AugMix, AutoContrast, Equalization, RandAugment, RandomColorDegeneration, RandomColorJitter, RandomGrayscale,
    RandomHue, RandomInvert, RandomPosterization, RandomSaturation, RandomSharpness, Solarization)
from minikeras.layers.preprocessing import ContrastLimitedAdaptiveHistogramEqualization  # noqa: F401
from minikeras.layers.reshaping.reshaping import Permute, RepeatVector  # noqa: F401
from minikeras.layers.reshaping.cropping import Cropping1D, Cropping2D, Cropping3D  # noqa: F401
from minikeras.layers.reshaping.up_sampling import UpSampling1D, UpSampling2D, UpSampling3D  # noqa: F401
from minikeras.layers.reshaping.zero_padding import ZeroPadding1D, ZeroPadding2D, ZeroPadding3D  # noqa: F401
from minikeras.layers.core.identity import Identity  # noqa: F401
from minikeras.layers.core.lambda_layer import Lambda  # noqa: F401
from minikeras.layers.preprocessing.rescaling import Rescaling  # noqa: F401
from minikeras.layers.regularization.spatial_dropout import (  # noqa: F401
    SpatialDropout1D, SpatialDropout2D, SpatialDropout3D)
from minikeras.layers.regularization.gaussian_noise import GaussianNoise  # noqa: F401
from minikeras.layers.regularization.gaussian_dropout import GaussianDropout  # noqa: F401
from minikeras.layers.regularization.alpha_dropout import AlphaDropout  # noqa: F401
from minikeras.layers.regularization.activity_regularization import ActivityRegularization  # noqa: F401
from minikeras.layers.normalization.group_normalization import GroupNormalization  # noqa: F401
from minikeras.layers.normalization.rms_normalization import RMSNormalization  # noqa: F401
from minikeras.layers.normalization.unit_normalization import UnitNormalization  # noqa: F401
from minikeras.layers.normalization.spectral_normalization import SpectralNormalization  # noqa: F401
from minikeras.layers.serialization import deserialize, serialize  # noqa: F401
from minikeras.saving.registry import register_builtin_namespace

# Every public layer class is minikeras's own in a .keras file (module "minikeras.layers").
register_builtin_namespace("minikeras.layers", sys.modules[__name__])

Convolution2D = Conv2D
Convolution1D = Conv1D
Convolution2DTranspose = Conv2DTranspose
Convolution1DTranspose = Conv1DTranspose
Convolution3D = Conv3D
Convolution3DTranspose = Conv3DTranspose
SeparableConvolution1D = SeparableConv1D
SeparableConvolution2D = SeparableConv2D

"""The summary functions of TF 2 (``mk.summary.scalar``, ``histogram``, ``image``, ``text``): each
writes one value, in TF 2's format (a tensor with its TensorBoard plugin's metadata), to the
default writer at a step. They run eagerly, on values computed already (call them outside
``mk.function``, e.g. on what a compiled step returned)."""
import jax
import numpy as np

from minikeras.image.codec import encode_png
from minikeras.summary import writer as _writer
from minikeras.tensor import Tensor, Variable

DEFAULT_BUCKET_COUNT = 30  # tf.summary.histogram's


def _numpy(name, data):
    try:
        if isinstance(data, (Tensor, Variable)):
            data = data.numpy()
        if isinstance(data, jax.core.Tracer):
            raise TypeError("it is a jax tracer")
    except TypeError as error:
        raise TypeError(f"mk.summary: '{name}' received a traced value (inside mk.function): summaries are written "
                        f"eagerly, so return the value from the compiled function and write it after the call "
                        f"({error})") from None
    return np.asarray(data)


def _write(name, step, make_summary):
    """Writes ``make_summary()`` at ``step`` to the default writer; returns whether it wrote."""
    writer = _writer.default_writer()
    if writer is None or not _writer.should_record_summaries():
        return False
    step = _writer.resolve_step(step)
    writer.write(make_summary(), step)
    return True


def scalar(name, data, step=None, description=None):
    """Writes a scalar (a float32 tensor for TensorBoard's scalars dashboard).

    Returns True if written, False when no default writer is set (as in TF).

    >>> with mk.summary.create_file_writer("logs").as_default():
    ...     mk.summary.scalar("accuracy", 0.9, step=1)
    True
    """
    def make():
        from tensorboard.plugins.scalar import summary_v2
        value = _numpy(name, data)
        if value.size != 1:
            raise ValueError(f"mk.summary.scalar '{name}' expects a scalar, received shape {value.shape}")
        return summary_v2.scalar_pb(name, value.reshape(()).astype(np.float32), description=description)
    return _write(name, step, make)


def histogram(name, data, step=None, buckets=None, description=None):
    """Writes the histogram of ``data``'s values (``buckets`` equal-width buckets over its range,
    30 by default), for TensorBoard's histograms and distributions dashboards."""
    def make():
        from tensorboard.plugins.histogram import summary_v2
        values = _numpy(name, data).astype(np.float64)
        return summary_v2.histogram_pb(name, values, buckets=DEFAULT_BUCKET_COUNT if buckets is None else buckets,
                                       description=description)
    return _write(name, step, make)


def _to_uint8(images):
    """Floats in [0, 1] to 0..255 as TF's ``convert_image_dtype(saturate=True)``; integers as they are."""
    if images.dtype == np.uint8:
        return images
    if np.issubdtype(images.dtype, np.floating):
        return np.clip(np.floor(images.astype(np.float64) * 255.5), 0, 255).astype(np.uint8)
    return np.clip(images, 0, 255).astype(np.uint8)


def image(name, data, step=None, max_outputs=3, description=None):
    """Writes up to ``max_outputs`` images from ``data`` of shape (k, height, width, channels)
    (channels 1, 3 or 4; floats in [0, 1] or uint8), PNG-encoded, for the images dashboard."""
    def make():
        from tensorboard.compat.proto import summary_pb2
        from tensorboard.plugins.image import metadata
        from tensorboard.util import tensor_util
        images = _numpy(name, data)
        if images.ndim != 4 or images.shape[-1] not in (1, 3, 4):
            raise ValueError(f"mk.summary.image '{name}' expects images of shape (k, height, width, channels) with 1, "
                             f"3 or 4 channels, received shape {images.shape}")
        images = _to_uint8(images)
        content = [str(images.shape[2]).encode(), str(images.shape[1]).encode()]
        content += [encode_png(one) for one in images[:max_outputs]]  # Pillow, as mk.io.encode_png
        tensor = tensor_util.make_tensor_proto(np.array(content, dtype=object), dtype=np.object_)
        summary = summary_pb2.Summary()
        summary.value.add(tag=name, tensor=tensor, metadata=metadata.create_summary_metadata(
            display_name=None, description=description))
        return summary
    return _write(name, step, make)


def text(name, data, step=None, description=None):
    """Writes a string (or an array of strings; Markdown is rendered) for the text dashboard."""
    def make():
        from tensorboard.plugins.text import summary_v2
        value = data.numpy() if isinstance(data, (Tensor, Variable)) else data
        return summary_v2.text_pb(name, np.asarray(value, dtype=object), description=description)
    return _write(name, step, make)


def keras_model(name, config_json, step=0):
    """Writes a model's Keras JSON config for TensorBoard's graph dashboard (its "Keras" conceptual
    graph), as Keras's TensorBoard callback does with ``write_graph``."""
    def make():
        from tensorboard.compat.proto import summary_pb2
        from tensorboard.util import tensor_util
        metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(
            plugin_name="graph_keras_model", content=b"1"))
        summary = summary_pb2.Summary()
        summary.value.add(tag=name, metadata=metadata,
                          tensor=tensor_util.make_tensor_proto(np.array(config_json, dtype=object), dtype=np.object_))
        return summary
    return _write(name, step, make)

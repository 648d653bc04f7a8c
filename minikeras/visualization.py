"""``keras.visualization``: image galleries and segmentation masks drawn over images, as Keras 3's.

    from minikeras import keras
    keras.visualization.plot_image_gallery(images, value_range=(0, 1), rows=2, cols=4)
    keras.visualization.plot_segmentation_mask_gallery(images, num_classes=3, y_true=masks, y_pred=predicted)

The drawing runs on the host with NumPy (Keras's converts to NumPy too); the galleries need
matplotlib (``pip install matplotlib``). Not here: ``draw_bounding_boxes`` and
``plot_bounding_box_gallery`` (minikeras's image layers carry no bounding boxes, and Keras's
drawing of them needs OpenCV).
"""
import math

import numpy as np

from minikeras.backend import image_data_format
from minikeras.tensor import to_array


def _numpy(x):
    return np.asarray(to_array(x)) if not isinstance(x, np.ndarray) else x


def _palette(num_classes):
    """Keras's colours: class ``i`` is ``(i * (2**25 - 1, 2**15 - 1, 2**21 - 1)) % 255``."""
    palette = np.array([2 ** 25 - 1, 2 ** 15 - 1, 2 ** 21 - 1])
    return [((i * palette) % 255).tolist() for i in range(num_classes)]


def draw_segmentation_masks(images, segmentation_masks, num_classes=None, color_mapping=None, alpha=0.8, blend=True,
                            ignore_index=-1, data_format=None):
    """Colours each pixel of ``images`` (batch, height, width, channels) by its class in
    ``segmentation_masks`` (batch, height, width, 1; integers), as Keras 3 does.

    Args:
      num_classes: the classes coloured (default: the largest id in the masks, as Keras 3.15
        infers it, which leaves that id uncoloured).
      color_mapping: ``{class id: (r, g, b)}``; default Keras's palette.
      alpha: the masks' weight where ``blend``.
      blend: mix the colours with the images (``images * (1 - alpha) + colours * alpha``, uint8
        NumPy, pixels of ``ignore_index`` left as they are); otherwise the coloured images as
        float32.
      ignore_index: the id of pixels not to draw on.
      data_format: 'channels_last' or 'channels_first' (default ``image_data_format()``).
    """
    data_format = data_format or image_data_format()
    images, masks = _numpy(images), _numpy(segmentation_masks)
    if images.ndim != 4:
        raise ValueError(f"`images` must be batched 4D tensor. Received: images.shape={images.shape}")
    if data_format == "channels_first":
        images, masks = images.transpose(0, 2, 3, 1), masks.transpose(0, 2, 3, 1)
    images = images.astype("float32")
    if masks.dtype.kind not in "iu":
        raise TypeError(f"`segmentation_masks` must be in integer dtype. Received: segmentation_masks.dtype="
                        f"{masks.dtype.name}")
    if num_classes is None:
        num_classes = int(masks.max())
    colors = _palette(num_classes) if color_mapping is None else [color_mapping[i] for i in range(num_classes)]
    valid = (masks != ignore_index)[..., 0]
    drawn = images.copy()
    for class_id, color in enumerate(colors):
        drawn[masks[..., 0] == class_id] = np.asarray(color, dtype=drawn.dtype)
    if not blend:
        return drawn
    out = images * (1 - alpha) + drawn * alpha
    return np.where(valid[..., None], out, images).astype("uint8")


def _to_range(images, value_range):
    low, high = value_range
    return (images.astype("float32") - low) / (high - low) * 255.0


def plot_image_gallery(images, y_true=None, y_pred=None, label_map=None, rows=None, cols=None, value_range=(0, 255),
                       scale=2, path=None, show=None, transparent=True, dpi=60, legend_handles=None, data_format=None):
    """A grid of ``images`` (a batch) with matplotlib, as Keras 3's: ``rows`` x ``cols`` (default a
    square), titled with ``label_map[y_true[i]]`` / ``label_map[y_pred[i]]`` where given;
    ``value_range`` is the images' range (mapped to 0..255); saved to ``path`` or shown."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("The `plot_image_gallery` function requires the `matplotlib` package. Please install it "
                          "with `pip install matplotlib`.") from None
    if path is not None and show:
        raise ValueError("plot_gallery() expects either `path` to be set, or `show` to be true.")
    if (y_true is not None or y_pred is not None) and label_map is None:
        raise ValueError("If `y_true` or `y_pred` are provided, a `label_map` must also be provided.")
    show = show if show is not None else path is None
    data_format = data_format or image_data_format()
    images = _numpy(images)
    if images.ndim != 4:
        raise ValueError("`plot_images_gallery()` requires you to batch your `np.array` samples together.")
    batch_size = images.shape[0]
    rows = rows or int(math.ceil(math.sqrt(batch_size)))
    cols = cols or int(math.ceil(batch_size // rows))
    images = images[:min(rows * cols, batch_size)]
    if data_format == "channels_first":
        images = images.transpose(0, 2, 3, 1)
    fig, axes = plt.subplots(nrows=rows, ncols=cols, figsize=(cols * scale, rows * scale), frameon=False,
                             layout="tight", squeeze=True, sharex="row", sharey="col")
    fig.subplots_adjust(wspace=0, hspace=0)
    if isinstance(axes, np.ndarray) and axes.ndim == 1:
        axes = np.expand_dims(axes, 0 if rows == 1 else -1)
    if legend_handles is not None:
        fig.legend(handles=legend_handles, loc="lower center")
    images = _to_range(images, value_range)
    y_true = None if y_true is None else _numpy(y_true)
    y_pred = None if y_pred is None else _numpy(y_pred)
    for row in range(rows):
        for col in range(cols):
            index = row * cols + col
            axis = axes[row, col] if isinstance(axes, np.ndarray) else axes
            axis.imshow(images[index].astype("uint8"))
            axis.margins(x=0, y=0)
            axis.axis("off")
            title = []
            if y_true is not None and index < len(y_true):
                title.append(f"Label: {label_map.get(y_true[index], 'Unknown')}")
            if y_pred is not None and index < len(y_pred):
                title.append(f"Pred: {label_map.get(y_pred[index], 'Unknown')}")
            if title:
                axis.set_title("  ".join(title), fontsize=8)
    if path is not None:
        plt.savefig(fname=path, pad_inches=0, bbox_inches="tight", transparent=transparent, dpi=dpi)
        plt.close()
    elif show:
        plt.show()
        plt.close()


def plot_segmentation_mask_gallery(images, num_classes, value_range=(0, 255), y_true=None, y_pred=None,
                                   color_mapping=None, blend=True, alpha=0.8, ignore_index=-1, data_format=None,
                                   **kwargs):
    """One row per image: the image, then its ``y_true`` and ``y_pred`` masks drawn over it
    (``draw_segmentation_masks``), through ``plot_image_gallery`` (``kwargs`` go there)."""
    data_format = data_format or image_data_format()
    images = _numpy(images)
    if images.ndim != 4:
        raise ValueError(f"`images` must be batched 4D tensor. Received: images.shape={images.shape}")
    if data_format == "channels_first":
        images = images.transpose(0, 2, 3, 1)
    cols = 1 + (y_true is not None) + (y_pred is not None)

    def drawn(masks):
        masks = _numpy(masks)
        if data_format == "channels_first":
            masks = masks.transpose(0, 2, 3, 1)
        return draw_segmentation_masks(images, masks.astype("int32"), num_classes=num_classes,
                                       color_mapping=color_mapping, alpha=alpha, ignore_index=ignore_index,
                                       blend=blend, data_format="channels_last")

    true_drawn = None if y_true is None else drawn(y_true)
    pred_drawn = None if y_pred is None else drawn(y_pred)
    gallery = []
    for i in range(images.shape[0]):
        gallery.append(images[i])
        if true_drawn is not None:
            gallery.append(true_drawn[i])
        if pred_drawn is not None:
            gallery.append(pred_drawn[i])
    return plot_image_gallery(np.stack(gallery, axis=0), value_range=value_range, rows=images.shape[0], cols=cols,
                              data_format="channels_last", **kwargs)

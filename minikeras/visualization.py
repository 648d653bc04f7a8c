"""``keras.visualization``: image galleries and segmentation masks drawn over images, as Keras 3's.

    from minikeras import keras
    keras.visualization.plot_image_gallery(images, value_range=(0, 1), rows=2, cols=4)
    keras.visualization.plot_segmentation_mask_gallery(images, num_classes=3, y_true=masks, y_pred=predicted)

    keras.visualization.plot_bounding_box_gallery(images, "xyxy", y_true={"boxes": b, "labels": l})

The drawing runs on the host with NumPy (Keras's converts to NumPy too); the galleries need
matplotlib (``pip install matplotlib``), and the boxes and their labels are drawn with OpenCV,
as Keras draws them (``pip install "minikeras[visualization]"``: opencv-python-headless and
matplotlib, imported on first use).
"""
import math

import numpy as np

from minikeras.backend import image_data_format
from minikeras.image.bounding_boxes import convert_format
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


def _cv2(function):
    try:
        import cv2  # optional: the visualization extra; only the box drawing needs it
    except ImportError:
        raise ImportError(f"The `{function}` function requires the `cv2` package (OpenCV). Please install it with "
                          "`pip install opencv-python-headless` (or `pip install \"minikeras[visualization]\"`).") \
            from None
    return cv2


def _text_origin(x, y, font_scale, thickness):
    """Keras's place for a label: above the box where there is room, else inside it."""
    font_height = int(font_scale * 12)
    if y - 8 - 2 * font_height > 0:
        return x, y - 8
    return x + 3, y + 2 * font_height + thickness + 3


def draw_bounding_boxes(images, bounding_boxes, bounding_box_format, class_mapping=None, color=(128, 128, 128),
                        line_thickness=2, text_thickness=1, font_scale=1.0, data_format=None):
    """Draws ``bounding_boxes`` on a batch of ``images`` with OpenCV, as Keras 3's.

    Args:
      images: (batch, height, width, channels) images (channels first with
        ``data_format="channels_first"``); floats at most 1 are taken as 0..1, other floats as
        0..255 (clipped), and drawn on as uint8.
      bounding_boxes: a dict of ``"boxes"`` (batch, n, 4), ``"labels"`` (batch, n; -1: no box)
        and optionally ``"confidences"`` (batch, n), written after the labels.
      bounding_box_format: the boxes' format (``keras.utils.bounding_boxes.convert_format``'s).
      class_mapping: ``{class id: name}``: the names written above the boxes.
      color: the boxes' and labels' RGB colour.
      line_thickness, text_thickness, font_scale: OpenCV's drawing sizes (``text_thickness``
        None or 0: ``line_thickness``).

    Returns:
      A uint8 NumPy array of the images with the boxes drawn, the shape of ``images``. (Keras
      3.15 draws channels-first images as if they were channels-last; here they are drawn right.)
    """
    cv2 = _cv2("draw_bounding_boxes")
    class_mapping = class_mapping or {}
    text_thickness = text_thickness or line_thickness
    data_format = data_format or image_data_format()
    images = _numpy(images)
    if images.ndim != 4:
        raise ValueError(f"`images` must be batched 4D tensor. Received: images.shape={images.shape}")
    if not isinstance(bounding_boxes, dict):
        raise TypeError(f"`bounding_boxes` should be a dict. Received: bounding_boxes={bounding_boxes} of type "
                        f"{type(bounding_boxes)}")
    if "boxes" not in bounding_boxes or "labels" not in bounding_boxes:
        raise ValueError(f"`bounding_boxes` should be a dict containing 'boxes' and 'labels' keys. Received: "
                         f"bounding_boxes={bounding_boxes}")
    if data_format == "channels_first":
        images = images.transpose(0, 2, 3, 1)
    height, width = images.shape[1], images.shape[2]
    boxes = convert_format(dict(bounding_boxes), bounding_box_format, "xyxy", height, width)["boxes"]
    if images.dtype.kind == "f" and images.size > 0:
        images = np.clip(images, 0, 1) * 255 if images.max() <= 1.0 else np.clip(images, 0, 255)
    images = np.ascontiguousarray(images.astype("uint8"))
    boxes, labels = _numpy(boxes), _numpy(bounding_boxes["labels"])
    confidences = _numpy(bounding_boxes["confidences"]) if "confidences" in bounding_boxes else None
    for i in range(images.shape[0]):
        for j in range(boxes.shape[1]):
            x1, y1, x2, y2 = (int(v) for v in boxes[i, j].astype("int32"))
            label = int(labels[i, j].astype("int32"))
            if label == -1:
                continue
            cv2.rectangle(images[i], (x1, y1), (x2, y2), color, line_thickness)
            if label in class_mapping:
                text = class_mapping[label]
                if confidences is not None:
                    text = f"{text} | {confidences[i][j]:.2f}"
                cv2.putText(img=images[i], text=text, org=_text_origin(x1, y1, font_scale, text_thickness),
                            fontFace=cv2.FONT_HERSHEY_SIMPLEX, fontScale=font_scale, color=color,
                            thickness=text_thickness)
    return images.transpose(0, 3, 1, 2) if data_format == "channels_first" else images


def plot_bounding_box_gallery(images, bounding_box_format, y_true=None, y_pred=None, value_range=(0, 255),
                              true_color=(0, 188, 212), pred_color=(255, 235, 59), line_thickness=2, font_scale=1.0,
                              text_thickness=None, class_mapping=None, ground_truth_mapping=None,
                              prediction_mapping=None, legend=False, legend_handles=None, rows=None, cols=None,
                              data_format=None, **kwargs):
    """A gallery of ``images`` with their true boxes (``y_true``, in ``true_color``) and
    predicted ones (``y_pred``, in ``pred_color``) drawn by ``draw_bounding_boxes``, through
    ``plot_image_gallery`` (``kwargs`` go there), as Keras 3's.

    Args:
      y_true, y_pred: ``draw_bounding_boxes``'s dicts.
      class_mapping: the class names of both; ``ground_truth_mapping`` and
        ``prediction_mapping`` override it for one.
      legend: a "Ground Truth" / "Prediction" legend in the two colours (not with
        ``legend_handles``, matplotlib patches of your own).
    """
    try:
        from matplotlib import patches
    except ImportError:
        raise ImportError("The `plot_bounding_box_gallery` function requires the `matplotlib` package. Please "
                          "install it with `pip install matplotlib`.") from None
    prediction_mapping = prediction_mapping or class_mapping
    ground_truth_mapping = ground_truth_mapping or class_mapping
    data_format = data_format or image_data_format()
    images = _numpy(images)
    if images.ndim != 4:
        raise ValueError(f"`images` must be batched 4D tensor. Received: images.shape={images.shape}")
    if data_format == "channels_first":
        images = images.transpose(0, 2, 3, 1)
    if legend and legend_handles:
        raise ValueError("Only pass `legend` OR `legend_handles` to "
                         "`keras.visualization.plot_bounding_box_gallery()`.")

    def draw(drawn, boxes, color, mapping):
        return draw_bounding_boxes(drawn, boxes, bounding_box_format, class_mapping=mapping, color=color,
                                   line_thickness=line_thickness, text_thickness=text_thickness,
                                   font_scale=font_scale, data_format="channels_last")

    if y_true is not None:
        images = draw(images, y_true, true_color, ground_truth_mapping)
    if y_pred is not None:
        images = draw(images, y_pred, pred_color, prediction_mapping)
    if legend:
        legend_handles = [patches.Patch(color=np.array(true_color) / 255.0, label="Ground Truth"),
                          patches.Patch(color=np.array(pred_color) / 255.0, label="Prediction")]
    return plot_image_gallery(images, value_range=value_range, legend_handles=legend_handles, rows=rows, cols=cols,
                              data_format="channels_last", **kwargs)

"""Common PNG files (8 bits per sample, grey or RGB with or without alpha, not interlaced, no
palette or transparency) decoded with Pillow's own PNG decoder but without ``Image.open``'s
per-file machinery, which is most of the cost for small images; and many such files decoded
together, in one call to Pillow for all the files of one width and mode.

Pixels are the same as Pillow's ``Image.open``: the same decoder does the work. Anything
else (another kind of file, a bad checksum, truncated data) is left to the caller's full
path, which then reports errors as before.
"""
import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_MODES = {0: "L", 2: "RGB", 4: "LA", 6: "RGBA"}  # colour type -> Pillow's mode (and raw mode) at 8 bits
# Chunks that change what Pillow decodes (palettes, transparency, animation).
_FULL_PATH = {b"PLTE", b"tRNS", b"acTL", b"fcTL", b"fdAT"}
# A first row filtered 'up' or 'paeth' reads a row of zeros above it: the same as 'none' or 'sub'.
_FIRST_ROW_FILTER = {0: b"\x00", 1: b"\x01", 2: b"\x00", 4: b"\x01"}
_MAX_GROUP_BYTES = 1 << 26  # the filtered rows decoded in one call, at most (one larger file goes alone)


def parse(data, max_pixels=None):
    """(width, height, mode, compressed pixel data) of a common PNG file, else None."""
    if not data.startswith(SIGNATURE):
        return None
    header, idat, idat_ended, pos = None, [], False, 8
    try:
        while True:
            length, cid = struct.unpack_from(">I4s", data, pos)
            body, pos = pos + 8, pos + 12 + length
            if pos > len(data):
                return None
            if cid == b"IDAT":
                if idat_ended:
                    return None  # the IDAT chunks must be consecutive
                idat.append(data[body:body + length])
                continue
            idat_ended = bool(idat)
            chunk = data[body:body + length]
            if not idat and zlib.crc32(chunk, zlib.crc32(cid)) != struct.unpack_from(">I", data, pos - 4)[0]:
                return None  # Pillow checks the chunks before the pixel data
            if cid == b"IHDR":
                if header is not None or length != 13:
                    return None
                header = struct.unpack(">IIBBBBB", chunk)
            elif cid == b"IEND":
                break
            elif cid in _FULL_PATH or not cid[:1].islower():
                return None
    except struct.error:
        return None
    if header is None or not idat:
        return None
    width, height, depth, color, compression, filtering, interlace = header
    mode = _MODES.get(color)
    if (mode is None or depth != 8 or compression or filtering or interlace or not width or not height
            or (max_pixels and width * height > max_pixels)):
        return None
    return width, height, mode, idat[0] if len(idat) == 1 else b"".join(idat)


def open_image(Image, data):
    """A common PNG file as the loaded ``PIL.Image`` that ``Image.open`` gives, else None."""
    parsed = parse(data, Image.MAX_IMAGE_PIXELS)
    if parsed is None:
        return None
    width, height, mode, pixels = parsed
    try:
        return Image.frombytes(mode, (width, height), pixels, "zip", mode)
    except (OSError, ValueError):
        return None


def to_array(image):
    """A loaded image's pixels as an array (height, width[, channels]), as ``np.asarray``."""
    if image.mode in ("L", "LA", "RGB", "RGBA"):
        array = np.frombuffer(image.tobytes(), np.uint8)
        shape = (image.height, image.width) + ((len(image.mode),) if len(image.mode) > 1 else ())
        return array.reshape(shape)
    return np.asarray(image)


def _inflate(parsed):
    """The filtered rows of a parsed file, its first row's filter made independent of the row
    above; None when that cannot be done (an 'average' first row, a bad or short stream)."""
    width, height, mode, pixels = parsed
    size = height * (1 + width * len(mode))
    try:
        rows = zlib.decompress(pixels, 15, size + 1)
    except zlib.error:
        return None
    first = _FIRST_ROW_FILTER.get(rows[0]) if rows else None
    if first is None or len(rows) < size:
        return None
    return first + rows[1:size]


def decode_batch(Image, datas, target_modes, inflate_map=map):
    """Decodes many files at once: a list with, for each file, its pixels converted to
    ``target_modes[mode]`` (the mode to convert each file mode to; a mode missing there, or a
    file that is not a common PNG, gives None) as a uint8 array (height, width, channels).

    The files of one width and mode are decoded as one tall image: their rows, inflated by
    ``inflate_map`` (``map``, or a thread pool's: zlib runs without the GIL), are joined and
    handed to Pillow's decoder and converter in one call each.
    """
    parsed = [parse(data, Image.MAX_IMAGE_PIXELS) for data in datas]
    todo = [i for i, p in enumerate(parsed) if p is not None and p[2] in target_modes]
    rows = dict(zip(todo, inflate_map(_inflate, [parsed[i] for i in todo])))
    groups, latest = [], {}  # [(width, mode), bytes of rows, files]; a group's rows stay under _MAX_GROUP_BYTES
    for i in todo:
        if rows[i] is None:
            continue
        key = (parsed[i][0], parsed[i][2])
        group = latest.get(key)
        if group is None or (group[2] and group[1] + len(rows[i]) > _MAX_GROUP_BYTES):
            group = latest[key] = [key, 0, []]
            groups.append(group)
        group[1] += len(rows[i])
        group[2].append(i)
    out = [None] * len(datas)
    for (width, mode), _, members in groups:
        heights = [parsed[i][1] for i in members]
        try:
            image = Image.frombytes(mode, (width, sum(heights)), zlib.compress(b"".join(rows[i] for i in members), 0),
                                    "zip", mode)
        except (OSError, ValueError):
            continue  # each file then takes the full path, which reports what is wrong
        if target_modes[mode] != mode:
            image = image.convert(target_modes[mode])
        array = to_array(image)
        if array.ndim == 2:
            array = array[:, :, None]
        start = 0
        for i, height in zip(members, heights):
            out[i] = array[start:start + height]
            start += height
    return out

"""Image resizing with Pillow: each width in each format, progress reported per variant.

The source is read from Django's default storage when it holds the named file, otherwise a
deterministic picture is drawn (the demo has no uploads). Variants are saved to the storage
under ``resized/`` when the payload asks (``"save": true``), else only measured. A file Pillow
cannot read goes to the dead-letter queue at once: resizing it again will not help.
"""

from __future__ import annotations

import io
import zlib
from pathlib import PurePosixPath
from typing import Any

from bullmq import UnrecoverableError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from PIL import Image, ImageDraw, UnidentifiedImageError

from queues.runner import SyncJobContext, job_handler

FORMATS = {"webp": "WEBP", "jpeg": "JPEG", "png": "PNG", "avif": "AVIF"}
DEFAULT_WIDTHS = (320, 640, 1280)
DEFAULT_FORMATS = ("webp", "jpeg")


class UnreadableImage(UnrecoverableError):  # type: ignore[misc]
    """Not an image Pillow can read."""


def _drawn(name: str, size: tuple[int, int]) -> Image.Image:
    """A picture that depends only on ``name``: gradient sky, sun, hills."""
    seed = zlib.crc32(name.encode())
    width, height = size
    image = Image.linear_gradient("L").resize(size).convert("RGB")
    tint = Image.new("RGB", size, ((seed >> 16) % 200, (seed >> 8) % 200, seed % 200))
    image = Image.blend(image, tint, 0.5)
    draw = ImageDraw.Draw(image)
    sun = (seed % width, height // 4)
    radius = height // 8
    draw.ellipse([sun[0] - radius, sun[1] - radius, sun[0] + radius, sun[1] + radius], "gold")
    draw.polygon([(0, height), (width // 3, height // 2), (width, height)], fill="darkgreen")
    return image


def _source(name: str, size: tuple[int, int]) -> Image.Image:
    if name.endswith(".corrupt"):
        data = b"\x89PNG but not really"
    elif default_storage.exists(name):
        with default_storage.open(name, "rb") as handle:
            data = handle.read()
    else:
        return _drawn(name, size)
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (UnidentifiedImageError, OSError) as error:
        raise UnreadableImage(f"{name}: {error}") from error
    return image.convert("RGB")


@job_handler("images", concurrency=2)
def resize_image(payload: dict[str, Any], ctx: SyncJobContext) -> dict[str, Any]:
    name = str(payload["image"])
    widths = [int(w) for w in payload.get("widths", DEFAULT_WIDTHS)]
    formats = [str(f).lower() for f in payload.get("formats", DEFAULT_FORMATS)]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not widths or min(widths) < 1:
        raise UnrecoverableError(f"bad request: widths {widths}, formats {formats}")
    size = payload.get("size", (1600, 1200))
    source = _source(name, (int(size[0]), int(size[1])))
    stem = PurePosixPath(name).stem
    variants = []
    total = len(widths) * len(formats)
    for width in widths:
        height = max(1, round(source.height * width / source.width))
        resized = source.resize((width, height), Image.Resampling.LANCZOS)
        for fmt in formats:
            buffer = io.BytesIO()
            resized.save(buffer, FORMATS[fmt], quality=80)
            variant: dict[str, Any] = {
                "width": width,
                "height": height,
                "format": fmt,
                "bytes": buffer.tell(),
            }
            if payload.get("save"):
                path = f"resized/{stem}-{width}.{fmt}"
                variant["path"] = default_storage.save(path, ContentFile(buffer.getvalue()))
            variants.append(variant)
            ctx.progress(round(100 * len(variants) / total))
        ctx.log(f"{width}px: {', '.join(formats)}")
    return {"image": name, "source": [source.width, source.height], "variants": variants}

"""Short synthetic videos written with PyAV for the tests (no files are shipped)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def write_video(path: Path, *, seconds: float, fps: int = 10, width: int = 64,
                height: int = 48, step: int = 8) -> Path:
    """An MPEG-4 video whose frame ``i`` is flat with red level ``(step * i) % 256``."""
    import av

    with av.open(str(path), "w") as out:
        stream = out.add_stream("mpeg4", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for i in range(round(seconds * fps)):
            img = np.zeros((height, width, 3), np.uint8)
            img[..., 0] = (step * i) % 256
            img[..., 1] = 60
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path

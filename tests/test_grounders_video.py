"""Frame sampling with a real decoder, on videos written in the test."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest

from cover.errors import InputError
from cover.grounders.video import find_video, sample_frames
from videos import write_video


def _red(jpeg: bytes) -> float:
    import av

    with av.open(io.BytesIO(jpeg), format="jpeg_pipe") as c:
        frame = next(c.decode(video=0))
        return float(frame.to_ndarray(format="rgb24")[..., 0].mean())


@pytest.mark.parametrize("n", [1, 4, 7])
def test_frames_at_segment_centres_are_the_right_frames(tmp_path: Path, n: int):
    # 2 frames per second, frame i has red level 25 i: the content says which frame it is
    video = write_video(tmp_path / "v.mp4", seconds=5.0, fps=2, step=25)
    s = sample_frames(video, n)
    assert s.duration == pytest.approx(5.0, abs=0.01) and s.fps == 2
    assert len(s.frames) == n
    for i, f in enumerate(s.frames):
        t = (i + 0.5) * s.duration / n
        assert abs(f.time - t) <= 0.25 + 1e-9  # the nearest frame (period 0.5 s)
        assert f.jpeg[:2] == b"\xff\xd8"
        assert abs(_red(f.jpeg) - 25 * round(f.time * 2)) < 10


def test_frames_are_scaled_to_the_size_limit(tmp_path: Path):
    import av

    video = write_video(tmp_path / "wide.mp4", seconds=1.0, width=320, height=96)
    f = sample_frames(video, 1, max_side=100).frames[0]
    with av.open(io.BytesIO(f.jpeg), format="jpeg_pipe") as c:
        frame = next(c.decode(video=0))
    assert (frame.width, frame.height) == (100, 30)
    assert np.isfinite(f.time)


def test_find_video_and_bad_files(tmp_path: Path):
    write_video(tmp_path / "abc.mkv", seconds=1.0)
    assert find_video(tmp_path, "abc") == tmp_path / "abc.mkv"
    assert find_video(tmp_path, "abc.mkv") == tmp_path / "abc.mkv"
    assert find_video(tmp_path, "nope") is None
    data = write_video(tmp_path / "full.mp4", seconds=3.0).read_bytes()
    for frac in (0.5, 0.9):  # damaged files: a clear error naming the file, never a crash
        (tmp_path / "cut.mp4").write_bytes(data[:int(len(data) * frac)])
        with pytest.raises(InputError, match=r"cut\.mp4: cannot"):
            sample_frames(tmp_path / "cut.mp4", 4)
    (tmp_path / "junk.mp4").write_bytes(b"not a video at all")
    with pytest.raises(InputError, match=r"junk\.mp4"):
        sample_frames(tmp_path / "junk.mp4", 2)
    with pytest.raises(ValueError, match="n must be"):
        sample_frames(tmp_path / "abc.mkv", 0)


@pytest.mark.parametrize(("vid", "why"), [
    ("../abc", "has a '..' part"), ("sub/../../abc", "has a '..' part"), ("..", "has a '..' part"),
    ("/etc/passwd", "is an absolute path"), ("", "is empty"), (".", "is empty"),
    ("a\x00b", "holds a NUL byte"),
])
def test_find_video_never_reaches_outside_the_folder(tmp_path: Path, vid: str, why: str):
    inner = tmp_path / "videos"
    inner.mkdir()
    write_video(tmp_path / "abc.mp4", seconds=1.0)  # outside the folder: never found
    with pytest.raises(InputError, match=f"{re.escape(why)}: a video must be a file inside "
                                         f"{re.escape(str(inner))}"):
        find_video(inner, vid)


def test_find_video_follows_links_inside_the_folder(tmp_path: Path):
    store = tmp_path / "store"
    store.mkdir()
    write_video(store / "abc.mp4", seconds=1.0)
    inner = tmp_path / "videos"
    inner.mkdir()
    (inner / "abc.mp4").symlink_to(store / "abc.mp4")  # a folder of links to a dataset
    (inner / "sub").mkdir()
    assert find_video(inner, "abc") == inner / "abc.mp4"
    assert find_video(inner, "sub/x") is None
    with pytest.raises(InputError, match="cannot be looked up"):
        find_video(inner, "x" * 5000)  # a name too long for the file system

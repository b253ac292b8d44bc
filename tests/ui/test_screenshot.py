"""The Partitions page as a browser draws it: headless Chromium, when it is installed.

``apt-get install chromium`` provides it (docs/observability.md); without it the test is
skipped. The page is rendered by the app in-process and saved as a file, so no server or login
is needed; the check is that Chromium lays it out into a picture with the lanes' colours.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium (apt-get install chromium)")


def png_pixels(path: Path) -> tuple[int, int, bytes]:
    """Width, height and the raw (still filtered) scanlines of an 8-bit PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    chunks, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        if data[pos + 4:pos + 8] == b"IDAT":
            chunks.append(data[pos + 8:pos + 8 + length])
        pos += 12 + length
    return width, height, zlib.decompress(b"".join(chunks))


def test_chromium_draws_the_fact_page(client: TestClient, tmp_path: Path) -> None:
    page = client.get("/facts/events", params={"start": "2024-01-01T00:00:00+00:00",
                                               "end": "2024-01-02T00:00:00+00:00"})
    assert page.status_code == 200 and "<svg" in page.text
    html = tmp_path / "events.html"
    html.write_text(page.text)
    shot = tmp_path / "events.png"
    done = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--screenshot={shot}", "--window-size=1200,700", html.as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    assert shot.exists(), done.stderr[-2000:]
    width, height, pixels = png_pixels(shot)
    assert (width, height) == (1200, 700)
    assert len(set(pixels)) > 16, "a blank page: nothing was drawn"

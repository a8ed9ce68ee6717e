"""Small fake registry wheels and the simple-index pages listing them, as a package index would serve."""

from __future__ import annotations

import hashlib
import io
import zipfile

from tests.support.model_server import Served


def wheel(package: str, files: dict[str, bytes]) -> bytes:
    """A wheel of ``package`` holding ``files`` under ``package/data/``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{package}/__init__.py", "")
        for name, data in files.items():
            archive.writestr(f"{package}/data/{name}", data)
        archive.writestr(f"{package}-1.0.0.dist-info/RECORD", "")
    return buffer.getvalue()


def publish(served: Served, distribution: str, files: dict[str, bytes], *, sha256: str | None = None) -> str:
    """Put a wheel of ``distribution`` 1.0.0 on the index at ``/simple``; returns the wheel's path."""
    package = distribution.replace("-", "_")
    data = wheel(package, files)
    path = f"/files/{package}-1.0.0-py3-none-any.whl"
    served.files[path] = data
    digest = sha256 or hashlib.sha256(data).hexdigest()
    served.files[f"/simple/{distribution}/"] = (
        f'<html><body><a href="../../files/{package}-1.0.0-py3-none-any.whl#sha256={digest}">'
        f"{package}-1.0.0-py3-none-any.whl</a></body></html>"
    ).encode()
    return path

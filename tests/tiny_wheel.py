"""A pure-Python wheel built by hand (a wheel is a zip with its dist-info), so tests install
requirements with `pip --no-index --find-links` and never reach an index."""

from __future__ import annotations

import zipfile
from pathlib import Path


def tiny_wheel(folder: Path, name: str = "gkemltiny", version: str = "1.0") -> Path:
    """Write `<name>-<version>-py3-none-any.whl` into `folder`: a module whose VALUE is 42."""
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": "VALUE = 42\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = "".join(f"{path},,\n" for path in files) + f"{info}/RECORD,,\n"
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for member, text in {**files, f"{info}/RECORD": record}.items():
            wheel.writestr(member, text)
    return path

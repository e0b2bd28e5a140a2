"""The package version, importable without loading anything else (``citecal --version``)."""

__version__ = "0.1.0"

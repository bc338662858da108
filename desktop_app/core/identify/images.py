"""Image loading under its old name for the lab's benchmarks (desktop_app/bench): the parsers read
images too, so it lives in library/images.py. Remove once the lab imports it from there."""

from desktop_app.core.library.images import load_image  # noqa: F401 - re-exported

from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The synthetic demo (issue 13): its generator, its bundle and `make run`'s loaders. It sits on top of every
    other app; only config refers to it."""

    name = "demo"

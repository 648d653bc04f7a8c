"""minikeras's version, in one place (``mk.__version__``, and the metadata of ``.keras`` files)."""
__version__ = "0.1.0"

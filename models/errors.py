"""Errors a user can fix; their messages say how."""


class UserFacingError(Exception):
    """Base class: the app shows the message as is, never a traceback."""


class ModelError(UserFacingError):
    """A model could not be found, loaded or used."""


class ArchitectureError(ModelError):
    """The module-tree rule (models/architectures.py) cannot find a model's embeddings, blocks or head."""


class ModelNotPrepared(ModelError):
    """A built-in model (default, default-quick, default-nli) is not in the cache yet."""

    def __init__(self, name: str):
        self.name = name
        super().__init__(f"The built-in model '{name}' is not prepared yet. Prepare it with "
                         f"`python cli.py prepare --model {name}` (or from the app's model picker).")


class InputError(UserFacingError):
    """The text to explain is not usable (empty, whitespace only, ...)."""

"""trous — exercices Python à trous, corrigés automatiquement."""

__version__ = "0.1.0"

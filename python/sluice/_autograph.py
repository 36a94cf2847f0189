"""sluice._autograph: DALI's module name for what the conditionals' conversion exports
(sluice._convert does the work: sluice uses Python's ast, not autograph)."""
from ._convert import do_not_convert, is_autograph_artifact  # noqa: F401

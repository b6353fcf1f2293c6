"""The exception hierarchy of symstride.

Every error the Rust engine reports arrives as a subclass of :class:`SymstrideError`
carrying the engine's message unchanged and its golden ``category`` (``"broadcast"``,
``"index"``, ``"shape"``, ``"view"``, ``"expand"``, ``"dtype"``, ``"overlap"`` or
``"error"``). Errors caused by bad input are also :class:`ValueError` (and
:class:`IndexError` for a dimension or index out of range), so ordinary ``except
ValueError`` code keeps working.
"""


class SymstrideError(Exception):
    """Base class of every error raised by symstride.

    ``category`` is the golden-file error category of the engine's error
    (``Error::category()`` in the Rust crate); ``kind`` names the engine's error variant.
    """

    category = "error"
    kind = "Invalid"


class InvalidInputError(SymstrideError, ValueError):
    """Input the engine rejects: bad sizes or strides, a bad argument, an invalid spec."""


class ParseError(InvalidInputError):
    """An expression, a spec or a file that cannot be parsed."""


class SymbolError(InvalidInputError):
    """An unknown symbol, a missing hint, an inconsistent binding."""


class BroadcastError(InvalidInputError):
    """Shapes that do not broadcast (PyTorch's wording)."""


class ShapeError(InvalidInputError):
    """Invalid sizes: a numel mismatch, two ``-1``, a negative size."""


class ViewError(InvalidInputError):
    """A ``view`` whose sizes are not compatible with the input's strides."""


class ExpandError(InvalidInputError):
    """Expanding a dimension that is not of size 1, or to too few sizes."""


class DTypeError(InvalidInputError):
    """An op not defined for a dtype, or a result type not castable to the output's."""


class MemoryOverlapError(InvalidInputError):
    """Written-to memory that overlaps itself or partially overlaps an input."""


class DimIndexError(InvalidInputError, IndexError):
    """A dimension or index out of range (PyTorch's ``IndexError``)."""


class ArtifactError(InvalidInputError):
    """An artifact file that is invalid, edited, or of another format version."""


class LimitError(SymstrideError, ValueError):
    """A configured limit was exceeded (guards per symbol, expression size, storage size)."""


class SymOverflowError(SymstrideError, OverflowError):
    """A size, stride, numel or byte offset does not fit in a signed 64-bit integer."""


class SymZeroDivisionError(SymstrideError, ZeroDivisionError):
    """Division or modulo by zero while evaluating an expression."""


class DataDependentError(SymstrideError, RuntimeError):
    """A branch on a condition over unbacked symbols that cannot be decided statically."""


class GuardError(SymstrideError, RuntimeError):
    """Inputs that no specialization of a compiled artifact admits, where re-tracing was
    refused (``Artifact.run_with(arrays, retrace=False)``)."""


class SymstrideIOError(SymstrideError, OSError):
    """A file that cannot be read or written."""


__all__ = [
    "SymstrideError",
    "InvalidInputError",
    "ParseError",
    "SymbolError",
    "BroadcastError",
    "ShapeError",
    "ViewError",
    "ExpandError",
    "DTypeError",
    "MemoryOverlapError",
    "DimIndexError",
    "ArtifactError",
    "LimitError",
    "SymOverflowError",
    "SymZeroDivisionError",
    "DataDependentError",
    "GuardError",
    "SymstrideIOError",
]

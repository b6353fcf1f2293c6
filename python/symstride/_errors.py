"""The exception hierarchy of symstride.

Every error the Rust engine reports arrives as a subclass of :class:`SymstrideError`
carrying the engine's message unchanged and its golden ``category`` (``"broadcast"``,
``"index"``, ``"shape"``, ``"view"``, ``"expand"``, ``"dtype"``, ``"overlap"`` or
``"error"``). Each class carries its category and variant as class attributes, so an error raised by
the package itself (a wrong input dtype is a ``DTypeError`` of category ``"dtype"``) has
the same ``category`` as the engine's. Errors caused by bad input are also :class:`ValueError` (and
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

    kind = "Parse"


class SymbolError(InvalidInputError):
    """An unknown symbol, a missing hint, an inconsistent binding."""

    kind = "Symbol"


class BroadcastError(InvalidInputError):
    """Shapes that do not broadcast (PyTorch's wording)."""

    category = "broadcast"
    kind = "Broadcast"


class ShapeError(InvalidInputError):
    """Invalid sizes: a numel mismatch, two ``-1``, a negative size."""

    category = "shape"
    kind = "Shape"


class ViewError(InvalidInputError):
    """A ``view`` whose sizes are not compatible with the input's strides."""

    category = "view"
    kind = "View"


class ExpandError(InvalidInputError):
    """Expanding a dimension that is not of size 1, or to too few sizes."""

    category = "expand"
    kind = "Expand"


class DTypeError(InvalidInputError):
    """An op not defined for a dtype, or a result type not castable to the output's, or
    an input array of another dtype than the spec's."""

    category = "dtype"
    kind = "DType"


class MemoryOverlapError(InvalidInputError):
    """Written-to memory that overlaps itself or partially overlaps an input."""

    category = "overlap"
    kind = "MemoryOverlap"


class DimIndexError(InvalidInputError, IndexError):
    """A dimension or index out of range (PyTorch's ``IndexError``)."""

    category = "index"
    kind = "Index"


class ArtifactError(InvalidInputError):
    """An artifact file that is invalid, edited, or of another format version."""

    kind = "Artifact"


class LimitError(SymstrideError, ValueError):
    """A configured limit was exceeded (guards per symbol, expression size, storage size)."""

    kind = "Limit"


class SymOverflowError(SymstrideError, OverflowError):
    """A size, stride, numel or byte offset does not fit in a signed 64-bit integer."""

    kind = "Overflow"


class SymZeroDivisionError(SymstrideError, ZeroDivisionError):
    """Division or modulo by zero while evaluating an expression."""

    kind = "DivisionByZero"


class DataDependentError(SymstrideError, RuntimeError):
    """A branch on a condition over unbacked symbols that cannot be decided statically."""

    kind = "DataDependent"


class GuardError(SymstrideError, RuntimeError):
    """Inputs that no specialization of a compiled artifact admits, where re-tracing was
    refused (``Artifact.run_with(arrays, retrace=False)``)."""


class SymstrideIOError(SymstrideError, OSError):
    """A file that cannot be read or written."""

    kind = "Io"


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

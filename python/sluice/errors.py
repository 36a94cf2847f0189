"""sluice.errors: the exception classes (defined by the C extension, listed here).

SluiceError(RuntimeError) is the base; each carries .code, .operator, .node, .iteration,
.sample, .source and .detail from the C library (None when unknown). By status code:
SL_EINVAL InvalidArgumentError (also ValueError), SL_ENOTFOUND NotFoundError (also LookupError),
SL_EIO ReadError, SL_ECORRUPT CorruptDataError, SL_EUNSUPPORTED UnsupportedError (also
NotImplementedError), SL_ENOMEM OutOfMemoryError (also MemoryError), SL_ECANCELED
CanceledError, SL_EMISUSE MisuseError, SL_ECALLBACK CallbackError, SL_EWORKER WorkerError,
SL_EINTERNAL InternalError. ArgumentTypeError (also TypeError) is raised where an operator is
called with an unknown or ill-typed argument. DALI raises RuntimeError for pipeline errors;
every class here is one.
"""
from ._sluice import (  # noqa: F401
    ArgumentTypeError, CallbackError, CanceledError, CorruptDataError, InternalError,
    InvalidArgumentError, MisuseError, NotFoundError, OutOfMemoryError, ReadError, SluiceError,
    UnsupportedError, WorkerError)

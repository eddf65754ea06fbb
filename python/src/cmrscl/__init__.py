"""cmrscl: sparse matrix-vector products in the CMRS format on OpenCL devices.

    import cmrscl, numpy as np, scipy.sparse as sp
    A = sp.random(1000, 1000, density=0.01, format="csr")
    M = cmrscl.Matrix(A)                   # on the default device; M.plan says why
    y = M @ np.ones(1000)                  # numpy in, numpy out
    x, info = cmrscl.linalg.cg(M, b, rtol=1e-8)  # the whole solve on the device
    C = cmrscl.multiply(A, A)              # C = A A on the device, as scipy CSR

Errors of the library raise cmrscl.Error (status, status_name, the library's message);
wrong Python arguments raise TypeError or ValueError."""
import ctypes

import scipy.sparse

from ._context import Context, DeviceArray, Device, devices
from ._lib import Csr, Error, check, lib, text
from ._matrix import Matrix, default_context
from ._multiply import _to_scipy, multiply
from . import linalg

__version__ = "0.1.0"
__all__ = ["COLUMNS_IMPLIED", "Context", "Device", "DeviceArray", "Error", "Matrix",
           "aslinearoperator", "default_context", "devices", "generate", "library_version",
           "linalg", "multiply"]

# Matrix(..., column_bits=COLUMNS_IMPLIED): no column word for strips of one row whose columns
# are one run (CMRSCL_COLUMNS_IMPLIED in include/cmrscl.h); plan["column_bits"] is then 0.
COLUMNS_IMPLIED = -1


def library_version():
    """The version of the libcmrscl this package loaded."""
    return text(lib.cmrscl_version_string())


def aslinearoperator(matrix):
    """scipy.sparse.linalg.LinearOperator of a cmrscl.Matrix (its products on the device)."""
    return matrix.aslinearoperator()


def generate(spec):
    """A generated matrix as scipy.sparse.csr_array: libcmrscl's specs, deterministic -
    "stencil7:N" (3-D Poisson on N^3 points), "stencil5:N", "stencil27:N", "random:N:K",
    "rmat:S:E", "fem:N:B", "dense:N", "perm:N", "skewed:N:K:D:L", "geo:N:K" (a mesh-like
    graph's Laplacian, positive definite) (include/cmrscl_host.h)."""
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a string such as 'stencil7:100', not {spec!r}")
    csr = Csr()
    check(lib.cmrscl_csr_generate(spec.encode(), ctypes.byref(csr)))
    return _to_scipy(csr)

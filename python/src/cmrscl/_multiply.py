"""cmrscl.multiply: C = A B of two sparse matrices (cmrscl_csr_multiply, include/cmrscl_precond.h),
made on the device with AMG's Galerkin products' kernels and read back as scipy CSR."""
import ctypes

import numpy as np
import scipy.sparse

from ._context import Context
from ._lib import DOUBLE, Csr, MultiplyInfo, check, lib, text
from ._matrix import _csr_arrays, default_context


def _csr_view(A, name):
    """A cmrscl_csr view of A in double, and the arrays to keep alive while it is used."""
    if not (scipy.sparse.issparse(A) or isinstance(A, tuple)):
        raise TypeError(f"{name} must be a scipy.sparse matrix or a (data, indices, indptr) "
                        f"triple, not {type(A).__name__}")
    data, indices, indptr, shape = _csr_arrays(A, None if isinstance(A, tuple) else A.shape)
    values = np.ascontiguousarray(data, np.float64)
    return Csr.view(shape, indptr, indices, values), (indptr, indices, values)


def _to_scipy(csr):
    """The library's CSR copied into a scipy.sparse.csr_array (the library's arrays freed)."""
    try:
        nnz = csr.nnz
        indptr = np.ctypeslib.as_array(csr.row_ptr, (csr.rows + 1,)).copy()
        indices = (np.ctypeslib.as_array(csr.col_ind, (nnz,)).copy() if nnz
                   else np.empty(0, np.int32))
        data = np.ctypeslib.as_array(csr.values, (nnz,)).copy() if nnz else np.empty(0)
        return scipy.sparse.csr_array((data, indices, indptr), shape=(csr.rows, csr.cols))
    finally:
        lib.cmrscl_csr_free(ctypes.byref(csr))


def multiply(A, B=None, *, context=None, return_info=False):
    """C = A B (B = A when None) in double, as a scipy.sparse.csr_array with its columns
    ascending; every structural product is kept (products that cancel are stored as 0). Each
    entry adds its products in the order of A's row and then B's rows without fma: the same
    bits whether the device or the host's threads made C, run after run. Made on the context's
    device (None: the default context); by the host's threads where the device cannot (no fp64,
    a row of C past 1024 columns; the info says why), or where context is False (the
    reference). return_info: (C, info) with info a dict - on_device, reason, product_seconds
    (A and B up, C made), upload_seconds, seconds (with C read back)."""
    if context is False:
        handle = None
    else:
        context = default_context() if context is None else context
        if not isinstance(context, Context):
            raise TypeError(f"context must be a cmrscl.Context, None or False, not "
                            f"{type(context).__name__}")
        handle = context.handle()
    a, keep_a = _csr_view(A, "A")
    b, keep_b = (a, keep_a) if B is None else _csr_view(B, "B")
    if a.cols != b.rows:
        raise ValueError(f"A is {a.rows} x {a.cols} and B {b.rows} x {b.cols}: A's columns must "
                         "be B's rows")
    c = Csr()
    info = MultiplyInfo()
    check(lib.cmrscl_csr_multiply(handle, ctypes.byref(a), ctypes.byref(b), DOUBLE, None,
                                  ctypes.byref(c), ctypes.byref(info)))
    del keep_a, keep_b
    result = _to_scipy(c)
    if not return_info:
        return result
    return result, {"on_device": bool(info.on_device), "reason": text(info.reason),
                    "product_seconds": info.product_seconds,
                    "upload_seconds": info.upload_seconds, "seconds": info.seconds}

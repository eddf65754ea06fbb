"""Matrix: a scipy.sparse matrix on the device as CMRS, with its products.

Vectors are numpy arrays (copied to the device and back per call: the transfer is the
cost), DeviceArrays of the matrix's Context, or pyopencl arrays of a Context made with
Context.from_pyopencl (no copy: the product is enqueued and the call returns)."""
import ctypes
import threading
import weakref

import numpy as np
import scipy.sparse
import scipy.sparse.linalg

from ._context import Context, DeviceArray, closed_error
from ._lib import (COLUMN_MAJOR, DOUBLE, ENUMS, FLOAT, NON_TRANSPOSE, ROW_MAJOR, TRANSPOSE,
                   Options, Params, Timing, c_void_p, check, lib, new_params, text)

_INT32_MAX = 2**31 - 1
_default_context = None
_default_lock = threading.Lock()


def default_context():
    """The Context matrices get when none is given: made on first use, on the device
    Context() picks ($CMRSCL_DEVICE, else the first GPU, else the first device)."""
    global _default_context
    with _default_lock:
        if _default_context is None or _default_context.closed:
            _default_context = Context()
        return _default_context


def _precision(precision, data_dtype):
    if precision is None:
        return FLOAT if data_dtype == np.float32 else DOUBLE
    names = {"float": FLOAT, "single": FLOAT, "float32": FLOAT, "double": DOUBLE,
             "float64": DOUBLE}
    key = precision if isinstance(precision, str) else np.dtype(precision).name
    if key not in names:
        raise ValueError(f"precision must be 'float' or 'double' (or float32/float64), "
                         f"not {precision!r}")
    return names[key]


def _options(options):
    opt = Options()
    names = [name for name, _ in Options._fields_]
    for key, value in options.items():
        if key not in names:
            raise TypeError(f"unknown option {key!r}; options are {', '.join(names)}")
        if key in ENUMS:
            if value not in ENUMS[key]:
                raise ValueError(f"option {key} must be one of {ENUMS[key]}, not {value!r}")
            value = ENUMS[key].index(value)
        elif not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise TypeError(f"option {key} takes an integer, not {value!r}")
        elif not -2**31 <= value < 2**31:
            raise ValueError(f"option {key} = {value} does not fit a C int")
        setattr(opt, key, int(value))
    return opt


def _csr_arrays(A, shape):
    """(data, int32 indices, int64 indptr, shape) of a scipy.sparse matrix or a (data,
    indices, indptr) triple, checked so that the library never reads past an array."""
    if scipy.sparse.issparse(A):
        A = A.tocsr()
        data, indices, indptr, shape = A.data, A.indices, A.indptr, A.shape
    elif isinstance(A, tuple) and len(A) == 3:
        data, indices, indptr = (np.asarray(a) for a in A)
    else:
        raise TypeError("Matrix takes a scipy.sparse matrix or a (data, indices, indptr) "
                        f"triple, not {type(A).__name__}")
    if np.iscomplexobj(data) or data.dtype.kind not in "fiub":
        raise TypeError(f"cmrscl computes with real values, not {data.dtype}")
    if indices.dtype.kind not in "iu" or indptr.dtype.kind not in "iu":
        raise TypeError("indices and indptr must be integer arrays")
    if indptr.ndim != 1 or len(indptr) < 1 or indices.ndim != 1 or data.ndim != 1:
        raise ValueError("data, indices and indptr must be 1-D, indptr of rows + 1 entries")
    nnz = int(indptr[-1])
    if indptr[0] != 0 or np.any(indptr[1:] < indptr[:-1]) or nnz > min(len(indices), len(data)):
        raise ValueError("indptr must start at 0, never decrease, and end at nnz <= "
                         f"len(indices), len(data) ({len(indices)}, {len(data)})")
    if shape is None:
        shape = (len(indptr) - 1, int(indices[:nnz].max()) + 1 if nnz else 0)
    rows, cols = (int(n) for n in shape)
    if rows != len(indptr) - 1:
        raise ValueError(f"indptr has {len(indptr)} entries, the shape {shape} needs {rows + 1}")
    if not (0 <= rows <= _INT32_MAX and 0 <= cols <= _INT32_MAX):
        raise ValueError(f"shape {shape}: rows and columns must lie in 0 .. 2^31 - 1")
    indices = indices[:nnz]
    if nnz and (indices.min() < 0 or indices.max() >= cols):
        raise ValueError(f"a column index lies outside 0 .. {cols - 1}")
    return (data[:nnz], np.ascontiguousarray(indices, np.int32),
            np.ascontiguousarray(indptr, np.int64), (rows, cols))


def _leading(a, order):
    """The leading dimension with which the library reads the 2-D array a in `order` in
    place, or None (a size-1 dimension's stride does not matter)."""
    item, (n, k), (s0, s1) = a.itemsize, a.shape, a.strides
    if order == COLUMN_MAJOR:
        (n, k), (s0, s1) = (k, n), (s1, s0)
    if k > 1 and s1 != item:
        return None
    if n <= 1:
        return k
    return s0 // item if s0 % item == 0 and s0 >= item * k else None


def _block_layout(a):
    """(order, leading dimension) of a 2-D array the library can read in place, or None."""
    for order in (ROW_MAJOR, COLUMN_MAJOR):
        ld = _leading(a, order)
        if ld is not None:
            return order, ld
    return None


def _is_device(x):
    """A DeviceArray, or a pyopencl array (its buffer has an int_ptr)."""
    return isinstance(x, DeviceArray) or hasattr(getattr(x, "data", None), "int_ptr")


class Matrix:
    """A sparse matrix on an OpenCL device, in CMRS, planned for the device and matrix.

    Matrix(A, precision=None, context=None, **options): A is any scipy.sparse matrix, or a
    (data, indices, indptr) triple with shape=(rows, cols). precision: "float" or "double"
    (None: float for float32 values, else double). options: cmrscl_options fields, e.g.
    kernel="slice", height=32 (names as in include/cmrscl.h, enums as lower-case strings);
    none given: the library's plan, whose parameters and reason are in .plan."""

    def __init__(self, A, precision=None, context=None, *, shape=None, **options):
        data, indices, indptr, self.shape = _csr_arrays(A, shape)
        self._precision = _precision(precision, data.dtype)
        self.dtype = np.dtype(np.float32 if self._precision == FLOAT else np.float64)
        self.context = context if context is not None else default_context()
        if not isinstance(self.context, Context):
            raise TypeError(f"context must be a cmrscl.Context, not {type(context).__name__}")
        values = np.ascontiguousarray(data, self.dtype)
        handle = c_void_p()
        opt = _options(options)
        check(lib.cmrscl_matrix_create_i64(
            self.context.handle(), self._precision, self.shape[0], self.shape[1],
            indptr.ctypes.data, indices.ctypes.data, values.ctypes.data, ctypes.byref(opt),
            ctypes.byref(handle)))
        self._handle = handle.value
        self._free = weakref.finalize(self, lib.cmrscl_matrix_free, handle.value)
        self._pattern = (indptr, indices)  # what update_values(sparse matrix) compares
        self._source = data  # the values as given: what cmrscl.linalg.amg sets up from
        self.nnz = len(indices)
        self.context.adopt(self)

    def handle(self):
        if not self._free.alive or self.context.closed:
            raise closed_error("matrix")
        return self._handle

    def close(self):
        self._free()

    # ---- the plan -------------------------------------------------------------------
    def params(self):
        """The plan and sizes (cmrscl_params) as a dict: enums as names, strings decoded."""
        params = new_params()
        check(lib.cmrscl_matrix_params(self.handle(), ctypes.byref(params)))
        return _params_dict(params)

    @property
    def plan(self):
        return self.params()

    @property
    def plan_reason(self):
        return self.params()["plan_reason"]

    # ---- products -------------------------------------------------------------------
    def matvec(self, x, alpha=1.0, beta=0.0, y=None, *, transpose=False):
        """y = alpha*A*x + beta*y (A^T with transpose=True). x: numpy or device vector; y
        (optional unless beta != 0) is updated in place and returned."""
        op = TRANSPOSE if transpose else NON_TRANSPOSE
        n_in, n_out = self.shape[::-1] if not transpose else self.shape
        if beta != 0 and y is None:
            raise ValueError("beta != 0 needs y")
        if _is_device(x):
            x_mem = self._device_vector(x, (n_in,), "x")
            y = y if y is not None else DeviceArray(self.context, (n_out,), self.dtype)
            y_mem = self._device_vector(y, (n_out,), "y")
            check(lib.cmrscl_spmv_op(self.handle(), op, alpha, x_mem, beta, y_mem, None, 0,
                                     None, None))
            return y
        x = self._host_input(x, (n_in,), "x")
        out, result = self._host_output(y, (n_out,), beta)
        check(lib.cmrscl_spmv_host_op(self.handle(), op, alpha, x.ctypes.data, beta,
                                      out.ctypes.data))
        return _written(out, result)

    def matmat(self, X, alpha=1.0, beta=0.0, Y=None):
        """Y = alpha*A*X + beta*Y for a block of k vectors (X of shape (cols, k)): one read
        of the matrix per launch of plan["block_vectors"] vectors (16-64). numpy blocks in C or Fortran order (or views with a
        leading dimension) are read in place; device blocks are row-major."""
        if beta != 0 and Y is None:
            raise ValueError("beta != 0 needs Y")
        if _is_device(X):
            if not isinstance(X, DeviceArray) or X.ndim != 2:
                raise TypeError("a device block must be a 2-D cmrscl.DeviceArray")
            k = X.shape[1]
            x_mem = self._device_vector(X, (self.shape[1], k), "X")
            Y = Y if Y is not None else DeviceArray(self.context, (self.shape[0], k), self.dtype)
            y_mem = self._device_vector(Y, (self.shape[0], k), "Y")
            if k == 0:
                return Y
            check(lib.cmrscl_spmm(self.handle(), ROW_MAJOR, k, alpha, x_mem, k, beta, y_mem, k,
                                  None, 0, None, None))
            return Y
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (cols, k), not of shape {X.shape}")
        k = X.shape[1]
        X = self._host_input(X, (self.shape[1], k), "X", block=True)
        out, result = self._host_output(Y, (self.shape[0], k), beta, block=True)
        if k == 0:
            return _written(out, result)
        y_order, ldy = _block_layout(out)
        ldx = _leading(X, y_order)
        if ldx is None:  # one order for both: X follows Y's
            X = np.array(X, self.dtype, order="C" if y_order == ROW_MAJOR else "F")
            ldx = _leading(X, y_order)
        check(lib.cmrscl_spmm_host(self.handle(), y_order, k, alpha, X.ctypes.data, ldx, beta,
                                   out.ctypes.data, ldy))
        return _written(out, result)

    def __matmul__(self, x):
        if (len(x.shape) if _is_device(x) else np.ndim(x)) == 2:
            return self.matmat(x)
        return self.matvec(x)

    def rmatvec(self, x, alpha=1.0, beta=0.0, y=None):
        return self.matvec(x, alpha, beta, y, transpose=True)

    @property
    def T(self):
        """The transposed product's view: M.T @ x is A^T x (A^T is kept on the device once
        built: prepare_transpose says how much memory)."""
        return _Transposed(self)

    def prepare_transpose(self, **options):
        """Builds and keeps A^T now (else the first transposed product does); returns its
        plan. Costs transpose_device_bytes of device memory until release_transpose()."""
        params = new_params()
        opt = _options(options)
        check(lib.cmrscl_matrix_prepare_transpose(self.handle(), ctypes.byref(opt),
                                                  ctypes.byref(params)))
        return _params_dict(params)

    def release_transpose(self):
        check(lib.cmrscl_matrix_release_transpose(self.handle()))

    def update_values(self, values):
        """New values for the same pattern: a 1-D array of nnz values in the CSR order the
        matrix was made from, or a scipy.sparse matrix of the same pattern."""
        if scipy.sparse.issparse(values):
            data, indices, indptr, shape = _csr_arrays(values, None)
            if (shape != self.shape or not np.array_equal(indptr, self._pattern[0])
                    or not np.array_equal(indices, self._pattern[1])):
                raise ValueError("update_values: the new matrix's pattern differs")
            values = data
        values = np.asarray(values)
        if np.iscomplexobj(values) or values.dtype.kind not in "fiub":
            raise TypeError(f"values must be real, not {values.dtype}")
        if values.shape != (self.nnz,):
            raise ValueError(f"values must have shape ({self.nnz},), not {values.shape}")
        precision = FLOAT if values.dtype == np.float32 else DOUBLE
        values = np.ascontiguousarray(values, np.float32 if precision == FLOAT else np.float64)
        check(lib.cmrscl_matrix_update_values(self.handle(), values.ctypes.data, precision))
        self._source = values

    def time(self, warmup=3, repetitions=20, k=1):
        """Times the product on device vectors of ones (beta 0): median and minimum device
        time per product (ms) and the back-to-back loop's time per product (ms)."""
        timing = Timing()
        x = self.context.to_device(np.ones((self.shape[1], k) if k > 1 else self.shape[1],
                                           self.dtype))
        y = self.context.zeros((self.shape[0], k) if k > 1 else self.shape[0], self.dtype)
        if k == 1:
            check(lib.cmrscl_spmv_time_op(self.handle(), NON_TRANSPOSE, 1.0, x.mem(), 0.0,
                                          y.mem(), warmup, repetitions, ctypes.byref(timing)))
        else:
            check(lib.cmrscl_spmm_time(self.handle(), ROW_MAJOR, k, 1.0, x.mem(), k, 0.0,
                                       y.mem(), k, warmup, repetitions, ctypes.byref(timing)))
        return {"median_ms": timing.median_ms, "min_ms": timing.min_ms,
                "loop_ms": timing.loop_ms}

    def aslinearoperator(self):
        """A scipy.sparse.linalg.LinearOperator whose products run on the device, so cg,
        gmres, eigsh and lsqr can use it (numpy in and out: a copy each way per product)."""
        return scipy.sparse.linalg.LinearOperator(  # scipy may pass vectors as (n, 1)
            self.shape, matvec=lambda x: self.matvec(np.ravel(x)),
            rmatvec=lambda x: self.rmatvec(np.ravel(x)), matmat=self.matmat, dtype=self.dtype)

    # ---- argument checks ----------------------------------------------------------------
    def _device_vector(self, v, shape, name):
        if isinstance(v, DeviceArray):
            if v.context is not self.context:
                raise ValueError(f"{name} lives in another context than the matrix")
            mem = v.mem()
        elif hasattr(v, "data") and hasattr(v.data, "int_ptr"):  # a pyopencl array
            if v.context.int_ptr != self.context._cl_context:
                raise ValueError(f"{name} lives in another OpenCL context than the matrix")
            if getattr(v, "offset", 0) or not v.flags.c_contiguous:
                raise ValueError(f"{name}: a pyopencl array must be contiguous, offset 0")
            mem = v.data.int_ptr
        else:
            raise TypeError(f"{name} must be a device array, not {type(v).__name__}")
        if tuple(v.shape) != shape:
            raise ValueError(f"{name} has shape {tuple(v.shape)}, the product needs {shape}")
        if np.dtype(v.dtype) != self.dtype:
            raise TypeError(f"{name} is {np.dtype(v.dtype)}, the matrix {self.dtype}")
        return mem

    def _host_input(self, x, shape, name, block=False):
        x = np.asarray(x)
        if np.iscomplexobj(x) or x.dtype.kind not in "fiub":
            raise TypeError(f"{name} must be real, not {x.dtype}")
        if x.shape != shape:
            raise ValueError(f"{name} has shape {x.shape}, the product needs {shape}")
        if block and x.dtype == self.dtype and _block_layout(x) is not None:
            return x
        return np.ascontiguousarray(x, self.dtype)

    def _host_output(self, y, shape, beta, block=False):
        """(array the library writes, array to return): y itself when the library can
        write it in place, else a copy written back afterwards."""
        if y is None:
            return np.empty(shape, self.dtype), None
        if not isinstance(y, np.ndarray):
            raise TypeError(f"y must be a numpy array, not {type(y).__name__}")
        if y.shape != shape:
            raise ValueError(f"y has shape {y.shape}, the product needs {shape}")
        if not y.flags.writeable:
            raise ValueError("y is read-only")
        if y.dtype.kind != "f":
            raise TypeError(f"y must be a float array, not {y.dtype}")
        # in place only when packed: the library writes back the whole span it covers, and a
        # strided view's gaps belong to the caller
        packed = y.flags.c_contiguous or (block and y.flags.f_contiguous)
        if y.dtype == self.dtype and packed:
            return y, y
        out = np.array(y, self.dtype, order="C") if beta != 0 else np.empty(shape, self.dtype)
        return out, y

    def __repr__(self):
        state = "closed" if not self._free.alive else f"{self.nnz} entries"
        return f"<cmrscl.Matrix {self.shape[0]}x{self.shape[1]} {self.dtype} {state}>"


def _written(out, result):
    if result is None or result is out:
        return out
    result[...] = out
    return result


class _Transposed:
    """M.T: the products of A^T (vectors: one transposed product each)."""

    def __init__(self, matrix):
        self.matrix = matrix
        self.shape, self.dtype = matrix.shape[::-1], matrix.dtype

    def matvec(self, x, alpha=1.0, beta=0.0, y=None):
        return self.matrix.matvec(x, alpha, beta, y, transpose=True)

    def __matmul__(self, x):
        if np.ndim(x) == 2:
            columns = [self.matvec(np.asarray(x)[:, j]) for j in range(np.shape(x)[1])]
            return np.stack(columns, axis=1) if columns else np.empty((self.shape[0], 0))
        return self.matvec(x)

    @property
    def T(self):
        return self.matrix


def _params_dict(params):
    out = {}
    for name, _ in Params._fields_:
        value = getattr(params, name)
        if name == "struct_size":  # the view's size, not the plan's
            continue
        if name == "stats":
            value = {field: getattr(value, field) for field, _ in value._fields_}
        elif isinstance(value, bytes):
            value = text(value)
        elif name in ENUMS and 0 <= value < len(ENUMS[name]):
            value = ENUMS[name][value]
        out[name] = value
    out["precision"] = "float" if params.precision == FLOAT else "double"
    return out

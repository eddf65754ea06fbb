"""Krylov solvers on the device, with scipy.sparse.linalg's signatures and conventions: cg,
bicgstab, gmres.

    import cmrscl.linalg
    x, info = cmrscl.linalg.cg(A, b, rtol=1e-8, M="jacobi")

A is a cmrscl.Matrix, or a scipy.sparse matrix (made a cmrscl.Matrix on the default context,
in float when A and b are float32, else in double).

M=None, "jacobi" (the matrix's inverse diagonal; cg only) or "amg" (smoothed-aggregation
algebraic multigrid set up for A, or an AMG made once by amg(A) for many solves; cg, and
bicgstab and gmres on the right, so their residual is b - A x): the whole solve runs in
libcmrscl on the device (include/cmrscl_solve.h, cmrscl_precond.h): b and x cross the bus
once each, and every iteration, AMG's V-cycle too, stays there. Any other M - a
scipy.sparse matrix, a dense array, a LinearOperator, a cmrscl.Matrix or a callable M(r) - is taken as scipy takes it (aslinearoperator; a callable
as a LinearOperator's matvec) and the solve is scipy's own algorithm (scipy.sparse.linalg.cg,
bicgstab, gmres) with A a LinearOperator whose products run on the device: its iteration
runs on the host, each product copies a vector to the device and back. So does gmres with
callback_type="x" (the device forms the iterate only at a cycle's end).

Conventions, as scipy's (the installed scipy's where versions differ):
- info: 0 converged; > 0 not converged, the iterations done (gmres: restart cycles, scipy's
  maxiter; inner iterations with callback_type "legacy"); -1 a breakdown, -2 a NaN or Inf in
  the recurrence (the device path; scipy's algorithm returns scipy's own negative values).
  Converged means the true residual ||b - A x|| met max(rtol ||b||, atol), by more than its
  own rounding (the result's true_residual_rounding): a recurrence that met it while b - A x
  did not, or did by less than that, is not converged (the library's reason "drifted"; on
  scipy's path the residual is checked again by a product afterwards).
- Defaults: rtol 1e-5, atol 0, maxiter 10 x rows (gmres: 10 x rows cycles), gmres restart 20.
- tol= is accepted, meaning rtol, where the installed scipy accepts it (before 1.14; with
  scipy's DeprecationWarning where scipy also has rtol); elsewhere it is refused as scipy
  refuses it.
- maxiter=0 as the installed scipy: before scipy 1.12 (its Fortran iterations) no limit, as
  maxiter=None; since 1.12 no iteration - x0 comes back with info 0 (scipy's "maxiter
  iterations without converging" with maxiter 0).
- x's dtype is numpy's promotion of A's, b's and float32 (float32 only when both are float32);
  the device computes in the matrix's precision.
- callback(xk) once an iteration (cg, bicgstab), never the last iterate twice. On the device
  path xk is a view of the device's x that copies it to the host only when read (np.asarray,
  arithmetic, indexing, xk.copy(), any ndarray attribute; shape, dtype, ndim, size and len()
  read nothing), so a callback that only counts costs no copy - the device only waits for the
  host at each iteration. xk is valid during the callback alone: reading it after the
  callback returned raises RuntimeError (keep xk.copy()). gmres: callback(||r|| / ||b||)
  once an inner iteration ("pr_norm", or scipy's default "legacy", where maxiter then counts
  inner iterations), or callback(x) once a cycle ("x", scipy's algorithm on the host).

solve() returns x and a SolveResult with everything the library reports (iterations,
residuals of the recurrence and of b - A x, the history, times)."""
import ctypes
import inspect
import re
import warnings
import weakref

import numpy as np
import scipy
import scipy.sparse
import scipy.sparse.linalg as sla

from ._lib import FLOAT, MONITOR, AmgInfo, AmgOptions, Csr, SolveOptions, c_void_p, check, lib, text
from ._lib import SolveResult as _RawResult
from ._matrix import Matrix

__all__ = ["AMG", "SolveResult", "amg", "bicgstab", "cg", "gmres", "rigid_body_modes", "solve"]

_METHODS = {"cg": 0, "bicgstab": 1, "gmres": 2}
# cmrscl_solve_reason: 2 breakdown, 3 NaN or Inf, 5 the recurrence met the tolerance but
# b - A x did not ("drifted": not converged)
_BREAKDOWN, _NONFINITE, _DRIFTED = 2, 3, 5
_RESTART = 20  # scipy's gmres restart (the library's default too)
_MAX_ITERATIONS = 2**24  # the device's count (include/cmrscl_solve.h)

# The installed scipy: its spelling of the relative tolerance, and its maxiter=0.
_SCIPY_VERSION = tuple(int(v) for v in re.findall(r"\d+", scipy.__version__)[:2])
_SCIPY_PARAMETERS = inspect.signature(sla.cg).parameters
_SCIPY_TOL = "tol" in _SCIPY_PARAMETERS  # scipy < 1.14 (the only spelling before 1.12)
_SCIPY_RTOL = "rtol" in _SCIPY_PARAMETERS  # scipy >= 1.12
_MAXITER_0_UNLIMITED = _SCIPY_VERSION < (1, 12)  # the Fortran iterations' maxiter <= 0
_UNSET = object()


class SolveResult:
    """What a solve reports: reason ("converged", "max iterations", "breakdown", "NaN or
    Inf", ...: cmrscl_solve_reason_name), converged, iterations, residual (of the recurrence),
    true_residual (||b - A x|| from a product afterwards), true_residual_rounding (how far
    another evaluation of it may part from it, measured where the recurrence converged; else 0),
    b_norm, threshold, history (||r_k||, k = 0..iterations), seconds (the whole call),
    iterate_seconds, seconds_per_iteration, launches_per_iteration, checks, replacements
    (restarts from the true residual where the recurrence had drifted from it). converged: the
    true residual met the threshold with room for its rounding (true_residual +
    true_residual_rounding <= threshold)."""

    def __init__(self, raw):
        self.reason = text(lib.cmrscl_solve_reason_name(raw.reason)) or f"reason {raw.reason}"
        self.converged = bool(raw.converged)
        for name in ("iterations", "residual", "true_residual", "true_residual_rounding",
                     "b_norm", "threshold",
                     "breakdown", "seconds", "iterate_seconds", "launches_per_iteration",
                     "checks", "replacements"):
            setattr(self, name, getattr(raw, name))
        self.history = (np.ctypeslib.as_array(raw.history, (raw.history_length,)).copy()
                        if raw.history_length else np.empty(0))
        self.seconds_per_iteration = (raw.iterate_seconds / raw.iterations
                                      if raw.iterations else 0.0)
        self._reason_code = raw.reason

    def __repr__(self):
        return (f"<cmrscl.linalg.SolveResult {self.reason} after {self.iterations} "
                f"iterations, ||r|| {self.residual:.3e}, ||b - A x|| {self.true_residual:.3e}>")


class _Iterate:
    """A callback's x_k: the device's x, copied to the host on first use (then kept for the
    rest of the callback); shape, dtype, ndim, size and len() read nothing. Valid during the
    callback only: a read afterwards raises RuntimeError."""

    __slots__ = ("_device", "_host", "_live", "dtype", "shape")
    __hash__ = None

    def __init__(self, device, dtype):
        self._device, self._host, self._live = device, None, True
        self.dtype, self.shape = np.dtype(dtype), tuple(device.shape)

    def _array(self):
        if not self._live:
            raise RuntimeError("a cmrscl.linalg callback's xk is the device's x during the "
                               "callback only: keep xk.copy() to use it later")
        if self._host is None:
            self._host = self._device.get().astype(self.dtype, copy=False)
        return self._host

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    def __len__(self):
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        host = self._array()
        if dtype is not None and np.dtype(dtype) != host.dtype:
            return host.astype(dtype)
        return host.copy() if copy else host

    def copy(self):
        return self._array().copy()

    def __getattr__(self, name):  # ndarray's methods and attributes: sum(), max(), T, ...
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._array(), name)

    def __repr__(self):
        state = "read" if self._host is not None else "not read"
        return f"<cmrscl.linalg iterate shape={self.shape} dtype={self.dtype} ({state})>"


def _delegate(name):
    def method(self, *args):
        return getattr(self._array(), name)(*args)
    method.__name__ = name
    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul"):
    for _form in ("__%s__", "__r%s__"):
        setattr(_Iterate, _form % _name, _delegate(_form % _name))
for _name in ("__neg__", "__pos__", "__abs__", "__getitem__", "__iter__", "__eq__", "__ne__",
              "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__float__"):
    setattr(_Iterate, _name, _delegate(_name))


def _matrix(A, b):
    if isinstance(A, Matrix):
        return A
    if scipy.sparse.issparse(A):
        dtype = np.result_type(A.dtype, np.asarray(b).dtype)
        return Matrix(A, "float" if dtype == np.float32 else "double")
    raise TypeError("A must be a cmrscl.Matrix or a scipy.sparse matrix, not "
                    f"{type(A).__name__} (a LinearOperator cannot run on the device)")


def _result_dtype(mat, b):
    """numpy's promotion of A's and b's dtypes, at least float32 (scipy's x)."""
    return np.result_type(mat.dtype, np.asarray(b).dtype, np.float32)


def _vector(v, n, dtype, name):
    v = np.asarray(v)
    if v.ndim == 2 and 1 in v.shape:
        v = v.ravel()
    if v.shape != (n,):
        raise ValueError(f"{name} has shape {v.shape}: the matrix needs ({n},)")
    if np.iscomplexobj(v) or v.dtype.kind not in "fiub":
        raise TypeError(f"{name} must hold real numbers, not {v.dtype}")
    v = np.ascontiguousarray(v, dtype)
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} holds {int(np.sum(~np.isfinite(v)))} values that are NaN or Inf")
    return v


def _tolerance(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"{name} must be a number, not {value!r}")
    if not (np.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be finite and >= 0, not {value}")
    return float(value)


def _count(value, name, default, low=1):
    if value is None:
        return default
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if not low <= value <= _MAX_ITERATIONS:
        raise ValueError(f"{name} must lie in {low} .. 2^24, not {value}")
    return int(value)


def _rtol(rtol, tol, function):
    """rtol, or tol where the installed scipy takes it (its meaning: rtol)."""
    if tol is _UNSET:
        return rtol
    if not _SCIPY_TOL:
        raise TypeError(f"{function}() got an unexpected keyword argument 'tol' (scipy "
                        f"{scipy.__version__} spells it rtol)")
    if _SCIPY_RTOL:
        warnings.warn(f"'{function}' keyword argument 'tol' is deprecated in favor of 'rtol' "
                      "(as in scipy)", category=DeprecationWarning, stacklevel=3)
    return rtol if tol is None else tol


def _host_csr(mat):
    """A cmrscl_csr view of a Matrix's host pattern and values (in double), and the arrays to
    keep alive while the view is used."""
    indptr, indices = mat._pattern
    values = np.ascontiguousarray(mat._source, np.float64)
    return Csr.view(mat.shape, indptr, indices, values), (indptr, indices, values)


class AMG(sla.LinearOperator):
    """Smoothed-aggregation algebraic multigrid on the device (include/cmrscl_precond.h): the
    hierarchy set up on the host as PyAMG's smoothed_aggregation_solver defines it (symmetric
    strength theta, standard aggregation, the constant near-null space, Jacobi-smoothed
    prolongators, Galerkin coarse operators, the coarsest level inverted densely), every
    level's operators matrices of the library on the device, and its cycle (damped Jacobi
    before and after) applied there. As M of cmrscl.linalg.cg the whole solve runs on the
    device; as a LinearOperator (M of scipy's solvers, or of cmrscl's bicgstab and gmres) a
    product copies the vector to the device and back.

    A: a cmrscl.Matrix (its precision and context) or a scipy.sparse matrix (precision None:
    float for float32 values, else double). float_cycle: in double, the hierarchy and its cycle
    in float (mixed precision: half the bytes a cycle streams; r and z stay double). chebyshev:
    0 damped Jacobi, or a Chebyshev smoother of that degree (2..8; products a sweep). cycle:
    "V" (each level corrected once from the next) or "W" (twice: fewer iterations, each
    dearer). B: the
    near-null space, an array of rows x k (k 1..16; None: the constant vector) - for 3-D
    elasticity the rigid-body modes (rigid_body_modes), with block_size 3 (PyAMG's B and BSR
    blocks): the unknowns of a node (block_size consecutive rows) aggregated together. Facts:
    levels, rows, entries, rho (a level each: the estimate of rho(D^-1 A) the smoothers use),
    theta (the largest strength threshold a level took: theta 0 takes 0.25 on a level with
    hubs, rows 16 times the mean, or whose aggregates spread - random graphs - where every
    coupling strong would fill the coarse levels),
    operator_complexity, grid_complexity, device_bytes,
    cycle_dtype, cycle ("V" or "W"), setup_seconds (a dict by phase)."""

    def __init__(self, A, precision=None, context=None, *, theta=0.0, unsmoothed=False,
                 max_coarse=None, max_levels=None, float_cycle=False, chebyshev=0, B=None,
                 block_size=1, cycle="V"):
        if isinstance(A, Matrix):
            mat = A
        elif scipy.sparse.issparse(A):
            mat = Matrix(A, precision, context)
        else:
            raise TypeError(f"amg takes a cmrscl.Matrix or a scipy.sparse matrix, not "
                            f"{type(A).__name__}")
        if mat.shape[0] != mat.shape[1]:
            raise ValueError(f"AMG needs a square matrix, not {mat.shape}")
        csr, keep = _host_csr(mat)
        opt = AmgOptions(struct_size=ctypes.sizeof(AmgOptions))
        opt.theta = _tolerance(theta, "theta")
        opt.unsmoothed = 1 if unsmoothed else 0
        opt.max_coarse = _count(max_coarse, "max_coarse", 0, low=0)
        opt.max_levels = _count(max_levels, "max_levels", 0, low=0)
        if not isinstance(float_cycle, (bool, np.bool_)):
            raise TypeError(f"float_cycle must be True or False, not {float_cycle!r}")
        opt.float_cycle = 1 if float_cycle else 0
        opt.matrix = mat.handle()  # level 0 on the matrix itself (kept alive by self.matrix)
        opt.chebyshev = _count(chebyshev, "chebyshev", 0, low=0)
        if opt.chebyshev == 1 or opt.chebyshev > 8:
            raise ValueError(f"chebyshev {opt.chebyshev}: 0 (damped Jacobi) or a degree 2..8")
        opt.block_size = _count(block_size, "block_size", 1, low=1)
        if not isinstance(cycle, str) or cycle.upper() not in ("V", "W"):
            raise ValueError(f"cycle must be 'V' or 'W', not {cycle!r}")
        opt.cycle = 1 if cycle.upper() == "W" else 0
        self.cycle = cycle.upper()
        if B is not None:  # column-major, as the library reads it (copied there)
            B = np.asarray(B, dtype=np.float64)
            B = B.reshape(-1, 1) if B.ndim == 1 else B
            if B.ndim != 2 or B.shape[0] != mat.shape[0] or not 1 <= B.shape[1] <= 16:
                raise ValueError(f"B must be rows x k with {mat.shape[0]} rows and k 1..16, "
                                 f"not {B.shape}")
            B = np.asfortranarray(B)
            opt.near_null_count = B.shape[1]
            opt.near_null = B.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        handle = c_void_p()
        check(lib.cmrscl_precond_create_amg(mat.context.handle(), mat._precision,
                                            ctypes.byref(csr), ctypes.byref(opt),
                                            ctypes.byref(handle)))
        del keep
        self._handle = handle.value
        self._free = weakref.finalize(self, lib.cmrscl_precond_free, handle.value)
        self.matrix = mat
        self._facts()
        super().__init__(mat.dtype, mat.shape)

    def _facts(self):
        info = AmgInfo()
        check(lib.cmrscl_precond_amg_info(self._handle, ctypes.byref(info)))
        self.levels = info.levels
        self.rows = [int(info.rows[k]) for k in range(info.levels)]
        self.entries = [int(info.entries[k]) for k in range(info.levels)]
        self.rho = [float(info.rho[k]) for k in range(info.levels)]
        self.theta = float(info.theta)
        self.operator_complexity = info.operator_complexity
        self.grid_complexity = info.grid_complexity
        self.device_bytes = int(info.device_bytes)
        self.cycle_dtype = np.dtype(np.float32 if info.cycle_precision == FLOAT else np.float64)
        self.setup_seconds = {k: getattr(info, "seconds_" + k) for k in (
            "smoother", "strength", "aggregation", "prolongator", "rap", "coarse", "device",
            "total")}

    def update(self):
        """After self.matrix.update_values(...) (the same pattern): the hierarchy computed
        again from the matrix's new values on the same aggregates, in place."""
        csr, keep = _host_csr(self.matrix)
        check(lib.cmrscl_precond_amg_update(self.handle(), ctypes.byref(csr)))
        del keep
        self._facts()

    def aggregates(self, level=0):
        """Level `level`'s aggregates: each row's, a row of the next level (-1: none)."""
        level = _count(level, "level", 0, low=0)
        out = np.empty(self.rows[level] if level < self.levels else 0, np.int32)
        check(lib.cmrscl_precond_amg_aggregates(self.handle(), level, out.ctypes.data))
        return out

    def handle(self):
        if not self._free.alive:
            raise RuntimeError("this AMG preconditioner is closed")
        return self._handle

    def close(self):
        self._free()

    def _matvec(self, v):
        ctx = self.matrix.context
        r = ctx.to_device(np.ravel(v), self.matrix.dtype)
        z = ctx.empty(r.shape, self.matrix.dtype)
        check(lib.cmrscl_precond_apply(self.handle(), r.mem(), z.mem()))
        return z.get()

    def __repr__(self):
        return (f"<cmrscl.linalg.AMG {self.levels} levels, rows {self.rows}, operator "
                f"complexity {self.operator_complexity:.3f}>")


def rigid_body_modes(points):
    """The six rigid-body modes of 3-D elasticity at points (n x 3: x, y, z): a 3n x 6 array,
    a point's unknowns x, y, z consecutive - translations, then rotations about the centroid
    (cmrscl_rigid_body_modes): B for amg(A, B=..., block_size=3)."""
    xyz = np.ascontiguousarray(points, dtype=np.float64)
    if xyz.ndim != 2 or xyz.shape[1] != 3:
        raise ValueError(f"points must be n x 3, not {xyz.shape}")
    modes = np.empty((6, 3 * xyz.shape[0]))
    double_p = ctypes.POINTER(ctypes.c_double)
    check(lib.cmrscl_rigid_body_modes(xyz.shape[0], xyz.ctypes.data_as(double_p),
                                      modes.ctypes.data_as(double_p)))
    return modes.T


def amg(A, precision=None, context=None, **options):
    """AMG(A, ...): smoothed-aggregation AMG on the device, as M of cg (the module's AMG)."""
    return AMG(A, precision, context, **options)


def _maxiter(maxiter, default):
    """scipy's maxiter: None the default; 0 the default before scipy 1.12, else none."""
    count = _count(maxiter, "maxiter", default, low=0)
    return default if count == 0 and _MAXITER_0_UNLIMITED else count


def _is_device_preconditioner(M):
    return M is None or isinstance(M, AMG) or (isinstance(M, str) and M in ("jacobi", "amg"))


def _preconditioner(M, shape, dtype):
    """scipy's M as scipy takes it; a callable as a LinearOperator's matvec."""
    if isinstance(M, str):
        raise ValueError(f"M must be None, 'jacobi', a matrix, a LinearOperator or a "
                         f"callable, not {M!r}")
    if (callable(M) and not isinstance(M, sla.LinearOperator) and not hasattr(M, "shape")):
        return sla.LinearOperator(shape, matvec=M, dtype=dtype)
    return sla.aslinearoperator(M)


def _on_host(method, mat, b, x0, rtol, atol, maxiter, M, callback, dtype, **extra):
    """scipy's own algorithm with A's products on the device; converged (info 0) only when
    ||b - A x|| meets max(rtol ||b||, atol), checked by a product afterwards."""
    n = mat.shape[0]
    bh = _vector(b, n, dtype, "b")
    xh = _vector(x0, n, dtype, "x0") if x0 is not None else None
    rtol, atol = _tolerance(rtol, "rtol"), _tolerance(atol, "atol")
    if maxiter is not None:
        _count(maxiter, "maxiter", None, low=0)
    A = sla.LinearOperator(mat.shape, matvec=lambda v: mat @ np.ravel(v), dtype=dtype)
    kw = dict(x0=xh, maxiter=maxiter, atol=atol, callback=callback,
              M=_preconditioner(M, mat.shape, dtype) if M is not None else None, **extra)
    kw["rtol" if _SCIPY_RTOL else "tol"] = rtol
    x, info = getattr(sla, method)(A, bh, **kw)
    x = np.asarray(x).astype(dtype, copy=False)
    if info == 0 and not (maxiter == 0 and not _MAXITER_0_UNLIMITED):
        b64 = bh.astype(np.float64)
        true = np.linalg.norm(b64 - (mat @ x).astype(np.float64))
        if not true <= max(rtol * np.linalg.norm(b64), atol):
            info = maxiter if maxiter else 10 * n  # scipy's "not converged"
    return x, info


def _device_solve(mat, b, x0, method, rtol, atol, maxiter, M, restart, check_interval,
                  callback, dtype):
    n = mat.shape[0]
    if mat.shape[0] != mat.shape[1]:
        raise ValueError(f"a solve needs a square matrix, not {mat.shape}")
    opt = SolveOptions()
    opt.method = _METHODS[method]
    if isinstance(M, str) and M == "amg":
        M = AMG(mat)
    opt.preconditioner = 0 if M is None else 2 if isinstance(M, AMG) else 1
    if isinstance(M, AMG):
        if M.matrix.context is not mat.context or M.dtype != mat.dtype or M.shape != mat.shape:
            raise ValueError("M: an AMG of another matrix's size, precision or context")
        opt.precond = M.handle()
    opt.rtol, opt.atol = _tolerance(rtol, "rtol"), _tolerance(atol, "atol")
    if opt.rtol == 0 and opt.atol == 0:
        raise ValueError("rtol and atol are both 0: no solve ends that way")
    opt.max_iterations = maxiter
    opt.restart = min(restart, n) if method == "gmres" else 0
    opt.check_interval = _count(check_interval or None, "check_interval", 0)
    bh = _vector(b, n, mat.dtype, "b")
    xh = _vector(x0, n, mat.dtype, "x0") if x0 is not None else np.zeros(n, mat.dtype)
    ctx = mat.context
    bd, xd = ctx.to_device(bh), ctx.to_device(xh)
    failure = []
    if callback is not None:
        if not callable(callback):
            raise TypeError("callback must be callable")
        # gmres's callback gets ||r|| / ||b||; cg's and bicgstab's do not need ||b|| (a pass
        # over b, a large share of a short solve's time)
        bnorm = float(np.linalg.norm(bh.astype(np.float64, copy=False))) if method == "gmres" \
            else 0.0
        done = [0]

        def monitor(data, iterations, residual):  # at each check, x not yet updated past it
            # once an iteration: the check after the device stopped sees the last again
            if iterations <= done[0] or failure:
                return
            done[0] = iterations
            try:
                if method == "gmres":
                    callback(residual / bnorm if bnorm else residual)
                    return
                xk = _Iterate(xd, dtype)
                try:
                    callback(xk)
                finally:
                    xk._live = False
            except BaseException as exc:  # raised again after the solve
                failure.append(exc)

        hook = MONITOR(monitor)
        opt.monitor = ctypes.cast(hook, c_void_p)
        opt.check_interval = 1  # a check, so a call, every iteration
    solver = c_void_p()
    check(lib.cmrscl_solver_create(mat.handle(), ctypes.byref(opt), ctypes.byref(solver)))
    try:
        out = _RawResult()
        status = lib.cmrscl_solver_solve(solver, bd.mem(), xd.mem(), None, 0, None,
                                         ctypes.byref(out))
        result = SolveResult(out)
        lib.cmrscl_solve_result_free(ctypes.byref(out))
        if status != 0 and result._reason_code not in (_BREAKDOWN, _NONFINITE, _DRIFTED):
            check(status)
        x = xd.get().astype(dtype, copy=False)
    finally:
        lib.cmrscl_solver_free(solver)
    if failure:
        raise failure[0]
    return x, result


def solve(A, b, x0=None, *, method="cg", rtol=1e-5, atol=0.0, maxiter=None, M=None,
          restart=None, check_interval=0, callback=None):
    """x and a SolveResult: A x = b on the device by `method` ("cg", "bicgstab", "gmres").
    maxiter counts iterations (gmres: inner ones; None or 0: the library's 10 x rows);
    restart (gmres) default 20; M None, "jacobi" (cg), "amg" or an AMG; callback
    as cg()'s (gmres: the
    residual / ||b|| once an inner iteration); x's dtype as cg()'s."""
    if method not in _METHODS:
        raise ValueError(f"method must be one of {sorted(_METHODS)}, not {method!r}")
    if not _is_device_preconditioner(M):
        raise TypeError("solve()'s M must be None, 'jacobi', 'amg' or an AMG (a preconditioner "
                        f"that runs on the device), not {type(M).__name__}: cg(), bicgstab() "
                        "and gmres() take scipy's")
    if isinstance(M, str) and M == "jacobi" and method != "cg":
        raise TypeError(f"{method} has no Jacobi preconditioner on the device")
    mat = _matrix(A, b)
    return _device_solve(mat, b, x0, method, rtol, atol, _count(maxiter, "maxiter", 0, low=0),
                         M, _count(restart, "restart", _RESTART), check_interval, callback,
                         _result_dtype(mat, b))


def _info(result, not_converged):
    """scipy's info from a device solve: 0, -1 breakdown, -2 NaN or Inf, else (max
    iterations, drifted) not converged: the count scipy gives, at least 1."""
    if result.converged:
        return 0
    if result._reason_code == _BREAKDOWN:
        return -1
    if result._reason_code == _NONFINITE:
        return -2
    return max(1, not_converged)


def _unsolved(mat, b, x0):
    """maxiter=0 where scipy does no iteration: x0 (or zeros), info 0 as scipy's."""
    dtype = _result_dtype(mat, b)
    n = mat.shape[0]
    _vector(b, n, dtype, "b")
    return (_vector(x0, n, dtype, "x0").copy() if x0 is not None else np.zeros(n, dtype)), 0


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None,
       tol=_UNSET):
    """Conjugate gradients (A symmetric positive definite), as scipy.sparse.linalg.cg: (x,
    info). M None, "jacobi", "amg" or an AMG: on the device; any other (matrix, array,
    LinearOperator, callable): scipy's cg on the host with the products on the device (the
    module's doc)."""
    rtol = _rtol(rtol, tol, "cg")
    mat = _matrix(A, b)
    if not _is_device_preconditioner(M):
        return _on_host("cg", mat, b, x0, rtol, atol, maxiter, M, callback,
                        _result_dtype(mat, b))
    iterations = _maxiter(maxiter, min(10 * mat.shape[0], _MAX_ITERATIONS))
    if iterations == 0:
        return _unsolved(mat, b, x0)
    x, result = _device_solve(mat, b, x0, "cg", rtol, atol, iterations, M, 0, 0, callback,
                              _result_dtype(mat, b))
    return x, _info(result, result.iterations)


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None,
             tol=_UNSET):
    """BiCGStab, as scipy.sparse.linalg.bicgstab: (x, info). M None, "amg" or an AMG: on the
    device (AMG on the right); a matrix, array, LinearOperator or callable: scipy's bicgstab on
    the host with the products on the device. ("jacobi" runs on the device for cg alone.)"""
    rtol = _rtol(rtol, tol, "bicgstab")
    mat = _matrix(A, b)
    if isinstance(M, str) and M == "jacobi":
        raise TypeError("bicgstab has no Jacobi preconditioner on the device: pass "
                        "M=scipy.sparse.diags(1 / A.diagonal()) (scipy's bicgstab on the host)")
    if not _is_device_preconditioner(M):
        return _on_host("bicgstab", mat, b, x0, rtol, atol, maxiter, M, callback,
                        _result_dtype(mat, b))
    iterations = _maxiter(maxiter, min(10 * mat.shape[0], _MAX_ITERATIONS))
    if iterations == 0:
        return _unsolved(mat, b, x0)
    x, result = _device_solve(mat, b, x0, "bicgstab", rtol, atol, iterations, M, 0, 0,
                              callback, _result_dtype(mat, b))
    return x, _info(result, result.iterations)


def gmres(A, b, x0=None, *, rtol=1e-5, atol=0.0, restart=None, maxiter=None, M=None,
          callback=None, callback_type=None, tol=_UNSET):
    """Restarted GMRES, as scipy.sparse.linalg.gmres: (x, info). restart: Krylov vectors a
    cycle (default 20, at most the rows); maxiter: restart cycles (default 10 x rows; inner
    iterations with callback_type "legacy"); info when not converged: the cycles (scipy's).
    callback_type "pr_norm" or "legacy" (scipy's default): callback(||r|| / ||b||) once an
    inner iteration; "x": callback(x) once a cycle, scipy's gmres on the host with the
    products on the device, as for an M other than None, "amg" or an AMG. On the device AMG
    preconditions on the right, so the residual minimised is b - A x (scipy's gmres, on the
    left, minimises M (b - A x))."""
    rtol = _rtol(rtol, tol, "gmres")
    if callback_type is None:
        callback_type = "legacy"
    if callback_type not in ("x", "pr_norm", "legacy"):
        raise ValueError(f"Unknown callback_type: {callback_type!r}")
    if callback is None:
        callback_type = "pr_norm"  # no effect, as scipy's
    if isinstance(M, str) and M == "jacobi":
        raise TypeError("gmres has no Jacobi preconditioner on the device: pass "
                        "M=scipy.sparse.diags(1 / A.diagonal()) (scipy's gmres on the host)")
    restart = _count(restart, "restart", _RESTART)
    mat = _matrix(A, b)
    if isinstance(M, str) and M == "amg" and callback_type == "x":
        M = AMG(mat)  # the host's gmres takes it as a LinearOperator (on the left, as scipy's M)
    if not _is_device_preconditioner(M) or callback_type == "x":
        extra = {"restart": restart}
        if callback is not None:
            extra["callback_type"] = callback_type
        return _on_host("gmres", mat, b, x0, rtol, atol, maxiter, M, callback,
                        _result_dtype(mat, b), **extra)
    restart = min(restart, mat.shape[0])
    legacy = callback_type == "legacy"
    count = _maxiter(maxiter, 10 * mat.shape[0])
    if count == 0:
        return _unsolved(mat, b, x0)
    inner = min(count if legacy else count * restart, _MAX_ITERATIONS)
    x, result = _device_solve(mat, b, x0, "gmres", rtol, atol, inner, M, restart, 0,
                              callback, _result_dtype(mat, b))
    done = result.iterations if legacy else -(-result.iterations // restart)
    return x, _info(result, done)

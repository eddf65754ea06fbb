"""Krylov solvers on the device, with scipy.sparse.linalg's signatures: cg, bicgstab, gmres.

    import cmrscl.linalg
    x, info = cmrscl.linalg.cg(A, b, rtol=1e-8, M="jacobi")

A is a cmrscl.Matrix, or a scipy.sparse matrix (made a cmrscl.Matrix on the default context,
in its values' precision). The whole solve runs in libcmrscl on the device (include/
cmrscl_solve.h): b and x cross the bus once each, and every iteration stays there. info is 0
when converged, the iterations done when not (scipy's convention), negative on a breakdown
(-1) or a NaN or Inf in the recurrence (-2); solve() returns a SolveResult with everything the
library reports (iterations, residuals of the recurrence and of b - A x, the history, times).

M: None or "jacobi" (the matrix's inverse diagonal; cg only) - scipy's LinearOperator
preconditioners cannot run on the device. callback(xk) is called after every iteration of cg
and bicgstab (the solve then checks every iteration and reads x back each time: slow);
gmres's callback(residual / ||b||) after every inner iteration (scipy's "pr_norm")."""
import ctypes

import numpy as np
import scipy.sparse

from ._lib import MONITOR, SolveOptions, c_void_p, check, lib, text
from ._lib import SolveResult as _RawResult
from ._matrix import Matrix

__all__ = ["SolveResult", "bicgstab", "cg", "gmres", "solve"]

_METHODS = {"cg": 0, "bicgstab": 1, "gmres": 2}
_BREAKDOWN, _NONFINITE = 2, 3  # cmrscl_solve_reason


class SolveResult:
    """What a solve reports: reason ("converged", "max iterations", "breakdown", "NaN or
    Inf"), converged, iterations, residual (of the recurrence), true_residual (||b - A x||
    from a product afterwards), b_norm, threshold, history (||r_k||, k = 0..iterations),
    seconds (the whole call), iterate_seconds, seconds_per_iteration, launches_per_iteration,
    checks."""

    def __init__(self, raw):
        self.reason = text(lib.cmrscl_solve_reason_name(raw.reason))
        self.converged = bool(raw.converged)
        for name in ("iterations", "residual", "true_residual", "b_norm", "threshold",
                     "breakdown", "seconds", "iterate_seconds", "launches_per_iteration",
                     "checks"):
            setattr(self, name, getattr(raw, name))
        self.history = (np.ctypeslib.as_array(raw.history, (raw.history_length,)).copy()
                        if raw.history_length else np.empty(0))
        self.seconds_per_iteration = (raw.iterate_seconds / raw.iterations
                                      if raw.iterations else 0.0)
        self._reason_code = raw.reason

    def __repr__(self):
        return (f"<cmrscl.linalg.SolveResult {self.reason} after {self.iterations} "
                f"iterations, ||r|| {self.residual:.3e}, ||b - A x|| {self.true_residual:.3e}>")


def _matrix(A, b):
    if isinstance(A, Matrix):
        return A
    if scipy.sparse.issparse(A):
        dtype = np.result_type(A.dtype, np.asarray(b).dtype)
        return Matrix(A, "float" if dtype == np.float32 else "double")
    raise TypeError("A must be a cmrscl.Matrix or a scipy.sparse matrix, not "
                    f"{type(A).__name__} (a LinearOperator cannot run on the device)")


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


def _count(value, name, default):
    if value is None:
        return default
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if not 1 <= value <= 2**24:
        raise ValueError(f"{name} must lie in 1 .. 2^24, not {value}")
    return int(value)


def solve(A, b, x0=None, *, method="cg", rtol=1e-5, atol=0.0, maxiter=None, M=None,
          restart=None, check_interval=0, callback=None):
    """x and a SolveResult: A x = b on the device by `method` ("cg", "bicgstab", "gmres").
    maxiter counts iterations (gmres: inner ones); the rest as cg()'s."""
    if method not in _METHODS:
        raise ValueError(f"method must be one of {sorted(_METHODS)}, not {method!r}")
    mat = _matrix(A, b)
    n = mat.shape[0]
    if mat.shape[0] != mat.shape[1]:
        raise ValueError(f"a solve needs a square matrix, not {mat.shape}")
    if M not in (None, "jacobi"):
        raise TypeError("M must be None or 'jacobi' (a preconditioner that runs on the "
                        f"device), not {type(M).__name__}")
    opt = SolveOptions()
    opt.method = _METHODS[method]
    opt.preconditioner = 1 if M == "jacobi" else 0
    opt.rtol, opt.atol = _tolerance(rtol, "rtol"), _tolerance(atol, "atol")
    if opt.rtol == 0 and opt.atol == 0:
        raise ValueError("rtol and atol are both 0: no solve ends that way")
    opt.max_iterations = _count(maxiter, "maxiter", 0)
    opt.restart = _count(restart, "restart", 0) if method == "gmres" else 0
    opt.check_interval = _count(check_interval or None, "check_interval", 0)
    bh = _vector(b, n, mat.dtype, "b")
    xh = _vector(x0, n, mat.dtype, "x0") if x0 is not None else np.zeros(n, mat.dtype)
    ctx = mat.context
    bd, xd = ctx.to_device(bh), ctx.to_device(xh)
    failure = []
    if callback is not None:
        if not callable(callback):
            raise TypeError("callback must be callable")
        bnorm = float(np.linalg.norm(bh.astype(np.float64)))

        def monitor(data, iterations, residual):  # the device waits at each check
            try:
                if method == "gmres":
                    callback(residual / bnorm if bnorm else residual)
                elif iterations > 0:
                    callback(xd.get())
            except BaseException as exc:  # raised again after the solve
                failure.append(exc)

        hook = MONITOR(monitor)
        opt.monitor = ctypes.cast(hook, c_void_p)
        opt.check_interval = 1
    solver = c_void_p()
    check(lib.cmrscl_solver_create(mat.handle(), ctypes.byref(opt), ctypes.byref(solver)))
    try:
        out = _RawResult()
        status = lib.cmrscl_solver_solve(solver, bd.mem(), xd.mem(), None, 0, None,
                                         ctypes.byref(out))
        result = SolveResult(out)
        lib.cmrscl_solve_result_free(ctypes.byref(out))
        if status != 0 and result._reason_code not in (_BREAKDOWN, _NONFINITE):
            check(status)
        x = xd.get()
    finally:
        lib.cmrscl_solver_free(solver)
    if failure:
        raise failure[0]
    return x, result


def _info(result):
    if result.converged:
        return 0
    if result._reason_code == _BREAKDOWN:
        return -1
    if result._reason_code == _NONFINITE:
        return -2
    return result.iterations


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None):
    """Conjugate gradients (A symmetric positive definite), as scipy.sparse.linalg.cg: (x,
    info). M: None or "jacobi"."""
    x, result = solve(A, b, x0, method="cg", rtol=rtol, atol=atol, maxiter=maxiter, M=M,
                      callback=callback)
    return x, _info(result)


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None):
    """BiCGStab, as scipy.sparse.linalg.bicgstab: (x, info). M: None only."""
    if M is not None:
        raise TypeError("bicgstab takes no preconditioner on the device (M must be None)")
    x, result = solve(A, b, x0, method="bicgstab", rtol=rtol, atol=atol, maxiter=maxiter,
                      callback=callback)
    return x, _info(result)


def gmres(A, b, x0=None, *, rtol=1e-5, atol=0.0, restart=None, maxiter=None, M=None,
          callback=None, callback_type="pr_norm"):
    """Restarted GMRES, as scipy.sparse.linalg.gmres: (x, info). maxiter counts restart
    cycles as scipy's does (default 10 x rows / restart), restart the Krylov vectors a cycle
    (default 20, scipy's); callback(residual / ||b||) after every inner iteration."""
    if M is not None:
        raise TypeError("gmres takes no preconditioner on the device (M must be None)")
    if callback is not None and callback_type not in ("pr_norm", "legacy"):
        raise ValueError("gmres's callback gets the residual norm ('pr_norm'): the iterate is "
                         "formed only at the end of a cycle on the device")
    restart = _count(restart, "restart", 20)
    mat = _matrix(A, b)
    cycles = _count(maxiter, "maxiter", max(1, 10 * mat.shape[0] // restart))
    x, result = solve(mat, b, x0, method="gmres", rtol=rtol, atol=atol,
                      maxiter=min(cycles * restart, 2**24), restart=restart, callback=callback)
    return x, _info(result)

"""cmrscl.linalg: the library's solvers with scipy's signatures - converged where scipy's
converge, to the same solution within the tolerance; info as scipy gives it (0, the iterations
when not converged, negative on a breakdown); callbacks; wrong arguments refused."""
import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg as sla

import cmrscl
import cmrscl.linalg as la
from conftest import load


def _scipy(method, A, b, rtol):
    """scipy's own solve: rtol since scipy 1.12, tol before (Debian 12 has 1.10)."""
    try:
        return getattr(sla, method)(A, b, rtol=rtol, atol=0, maxiter=5000)
    except TypeError:
        return getattr(sla, method)(A, b, tol=rtol, atol=0, maxiter=5000)


def _scipy_iterations(method, A, b, rtol, M):
    """The iterations scipy's CG takes (its callback runs once an iteration)."""
    count = [0]
    Minv = None
    if M == "jacobi":
        Minv = scipy.sparse.diags(1.0 / A.diagonal())
    try:
        sla.cg(A, b, rtol=rtol, atol=0, maxiter=5000, M=Minv,
               callback=lambda xk: count.__setitem__(0, count[0] + 1))
    except TypeError:
        sla.cg(A, b, tol=rtol, atol=0, maxiter=5000, M=Minv,
               callback=lambda xk: count.__setitem__(0, count[0] + 1))
    return count[0]


def _check(A, b, x, rtol):
    assert np.linalg.norm(A @ x - b) <= 10 * rtol * np.linalg.norm(b)


@pytest.mark.parametrize("method,matrix,M", [("cg", "stencil7:14", None),
                                             ("cg", "Trefethen_2000.mtx", "jacobi"),
                                             ("bicgstab", "cage8.mtx", None),
                                             ("gmres", "cage8.mtx", None)])
def test_solvers_agree_with_scipy(context, precisions, method, matrix, M):
    A = load(matrix)
    b = np.linspace(1, 2, A.shape[0])
    theirs, info = _scipy(method, A, b, 1e-10)
    assert info == 0
    # every precision on the first case, the widest on the others (the kernels' builds are
    # most of the time on a CPU's OpenCL)
    first = (method, matrix) == ("cg", "stencil7:14")
    for precision in precisions if first else precisions[-1:]:
        rtol = 1e-10 if precision == "double" else 1e-4
        mat = cmrscl.Matrix(A, precision, context)
        kw = {"M": M} if M else {}
        x, info = getattr(la, method)(mat, b, rtol=rtol, **kw)
        assert info == 0 and x.dtype == np.result_type(mat.dtype, b.dtype)
        _check(A, b, x.astype(np.float64), 1e-4 if precision == "float" else rtol)
        if precision == "double":
            assert np.allclose(x, theirs, rtol=1e-6, atol=1e-8)
            if method == "cg":  # the textbook's iterations, as scipy counts them
                _, result = la.solve(mat, b, method="cg", rtol=rtol, M=M)
                want = _scipy_iterations(method, A, b, rtol, M)
                assert abs(result.iterations - want) <= 1 + 0.03 * want, \
                    f"{result.iterations} iterations, scipy's CG {want}"


def test_result_and_history(context):
    A = cmrscl.generate("stencil7:10")
    mat = cmrscl.Matrix(A, "double", context)
    b = np.ones(A.shape[0])
    x, r = la.solve(mat, b, method="cg", rtol=1e-9)
    assert r.converged and r.reason == "converged" and len(r.history) == r.iterations + 1
    assert np.isclose(r.history[0], np.linalg.norm(b)) and r.history[-1] == r.residual
    assert abs(r.true_residual - np.linalg.norm(A @ x - b)) <= 1e-8 * np.linalg.norm(b)
    assert r.seconds >= r.iterate_seconds > 0 and r.seconds_per_iteration > 0
    # a scipy matrix goes to the device itself, float32 values in float
    x32, info = la.cg(A.astype(np.float32), b.astype(np.float32), rtol=1e-4)
    assert info == 0 and x32.dtype == np.float32


def test_info_and_callbacks(context):
    A = cmrscl.generate("stencil7:10")
    mat = cmrscl.Matrix(A, "double", context)
    b = np.ones(A.shape[0])
    x, info = la.cg(mat, b, rtol=1e-12, maxiter=4)
    assert info == 4  # not converged: the iterations, as scipy
    seen = []
    x, info = la.cg(mat, b, rtol=1e-8, callback=lambda xk: seen.append(xk.copy()))
    assert info == 0 and len(seen) > 5 and np.array_equal(seen[-1], x)
    norms = []
    x, info = la.gmres(mat, b, rtol=1e-8, restart=8, callback=norms.append)
    assert info == 0 and norms[-1] <= 1e-8 and all(0 <= v for v in norms)

    def boom(xk):
        raise RuntimeError("stop")
    with pytest.raises(RuntimeError):
        la.cg(mat, b, callback=boom)
    # breakdown: CG on an indefinite matrix
    D = scipy.sparse.diags(np.where(np.arange(100) % 2, -1.0, 2.0)).tocsr()
    x, info = la.cg(cmrscl.Matrix(D, "double", context), np.ones(100))
    assert info == -1


def test_wrong_arguments(context):
    A = cmrscl.generate("stencil7:6")
    mat = cmrscl.Matrix(A, "double", context)
    b = np.ones(A.shape[0])
    with pytest.raises(TypeError):
        la.cg(sla.aslinearoperator(A), b)
    with pytest.raises(ValueError, match="M must be"):
        la.cg(mat, b, M="ilu")
    with pytest.raises(TypeError):
        la.solve(mat, b, M=sla.aslinearoperator(A))
    with pytest.raises(TypeError):
        la.bicgstab(mat, b, M="jacobi")
    with pytest.raises(ValueError, match="shape"):
        la.cg(mat, np.ones(5))
    with pytest.raises(ValueError, match="NaN or Inf"):
        la.cg(mat, np.full(A.shape[0], np.nan))
    with pytest.raises(ValueError):
        la.cg(mat, b, rtol=-1)
    with pytest.raises(TypeError):
        la.cg(mat, b, maxiter=2.5)
    with pytest.raises(ValueError):
        la.solve(mat, b, method="minres")
    with pytest.raises(ValueError, match="square"):
        la.cg(cmrscl.Matrix(scipy.sparse.random(4, 6, density=0.5, format="csr"), "double",
                            context), np.ones(4))

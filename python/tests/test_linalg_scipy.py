"""cmrscl.linalg against the installed scipy on the same problems, where scipy defines the
behaviour: info when not converged, maxiter=0, tol=, the result's dtype, the kinds of M,
the callbacks' counts (one an iteration) and their iterate (read from the device on use)."""
import inspect
import types
import warnings

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg as sla

import cmrscl
import cmrscl.linalg as la

SCIPY_RTOL = "rtol" in inspect.signature(sla.cg).parameters


def scipy_solve(method, A, b, rtol, **kw):
    """scipy's own solve, its relative tolerance spelt as the installed scipy spells it."""
    kw["rtol" if SCIPY_RTOL else "tol"] = rtol
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(sla, method)(A, b, atol=0, **kw)


@pytest.fixture(scope="module")
def poisson(context):
    A = cmrscl.generate("stencil7:8")  # 512 rows, SPD
    return A, cmrscl.Matrix(A, "double", context), np.linspace(1, 2, A.shape[0])


@pytest.fixture(scope="module")
def nonsymmetric(context):
    A = cmrscl.generate("convdiff:8")
    return A, cmrscl.Matrix(A, "double", context), np.linspace(1, 2, A.shape[0])


@pytest.mark.parametrize("method", ["cg", "bicgstab", "gmres"])
def test_info_not_converged_as_scipy(poisson, method):
    A, mat, b = poisson
    kw = {"restart": 5} if method == "gmres" else {}
    _, theirs = scipy_solve(method, A, b, 1e-14, maxiter=3, **kw)
    x, ours = getattr(la, method)(mat, b, rtol=1e-14, maxiter=3, **kw)
    assert ours == theirs == 3  # gmres: restart cycles, not the 15 inner iterations
    # the default maxiter: gmres's info is cycles as scipy's (10 x rows of them)
    _, result = la.solve(mat, b, method="gmres", rtol=1e-14, maxiter=40, restart=5)
    assert result.iterations == 40


def test_drifted_is_not_converged():
    """The library's reason 5 (the recurrence met the tolerance, b - A x did not)."""
    drifted = types.SimpleNamespace(converged=False, _reason_code=5, iterations=17)
    assert la._info(drifted, drifted.iterations) == 17
    assert la._info(types.SimpleNamespace(converged=False, _reason_code=5, iterations=0), 0) == 1


@pytest.mark.parametrize("method", ["cg", "bicgstab", "gmres"])
def test_converged_only_on_the_true_residual(context, method):
    """A float solve below float's reach (2-D Poisson at 1e-6: x's own rounding leaves more):
    the recurrence meets the tolerance, b - A x does not - never info 0; the result says
    drifted (or max iterations), and whatever converges meets the threshold in b - A x, with
    room for its rounding."""
    A = cmrscl.generate("stencil5:50").astype(np.float32)
    b = np.ones(A.shape[0], np.float32)
    mat = cmrscl.Matrix(A, "float", context)
    x, info = getattr(la, method)(mat, b, rtol=1e-6, maxiter=2000)
    true = np.linalg.norm(b - A.astype(np.float64) @ x.astype(np.float64))
    assert info != 0 and true > 1e-6 * np.linalg.norm(b)
    x, result = la.solve(mat, b, method=method, rtol=1e-6, maxiter=6000)
    assert not result.converged and result.reason in ("drifted", "max iterations")
    assert result.true_residual > result.threshold
    if result.reason == "drifted":
        assert result.residual <= result.threshold and result.replacements >= 1
    # in reach (1e-4): converged, and b - A x meets the threshold
    x, result = la.solve(mat, b, method=method, rtol=1e-4, maxiter=6000)
    assert result.converged and 0 < result.true_residual_rounding
    assert result.true_residual + result.true_residual_rounding <= result.threshold
    # with room for the rounding, numpy's own b - A x (another order of the sums) agrees
    assert np.linalg.norm(b - A.astype(np.float64) @ x.astype(np.float64)) <= result.threshold


@pytest.mark.parametrize("method", ["cg", "bicgstab", "gmres"])
def test_maxiter_zero_as_scipy(poisson, method):
    A, mat, b = poisson
    x0 = np.full(A.shape[0], 0.5)
    try:
        theirs, their_info = scipy_solve(method, A, b, 1e-10, maxiter=0, x0=x0.copy())
    except UnboundLocalError:  # scipy 1.18's gmres fails at maxiter=0: its cg's convention
        theirs, their_info = scipy_solve("cg", A, b, 1e-10, maxiter=0, x0=x0.copy())
    ours, info = getattr(la, method)(mat, b, x0=x0, rtol=1e-10, maxiter=0)
    assert info == their_info
    # scipy < 1.12: no limit (the solution); since 1.12: no iteration (x0)
    assert np.allclose(ours, theirs, rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError):
        la.cg(mat, b, maxiter=-1)


def test_tol_where_scipy_takes_it(poisson):
    A, mat, b = poisson
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            sla.cg(A, b, tol=1e-9, atol=0)
        scipy_takes_tol = True
    except TypeError:
        scipy_takes_tol = False
    if not scipy_takes_tol:
        with pytest.raises(TypeError, match="tol"):
            la.cg(mat, b, tol=1e-9)
        return
    for method in ("cg", "bicgstab", "gmres"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            x, info = getattr(la, method)(mat, b, tol=1e-9)
        y, _ = getattr(la, method)(mat, b, rtol=1e-9)
        assert info == 0 and np.array_equal(x, y)  # tol is rtol, the same solve
        assert np.linalg.norm(A @ x - b) <= 1e-8 * np.linalg.norm(b)


@pytest.mark.parametrize("a,b", [(np.float32, np.float32), (np.float32, np.float64),
                                 (np.float64, np.float32), (np.float32, np.int64),
                                 (np.float64, np.int32)])
def test_dtype_as_scipy(context, precisions, a, b):
    if "float" not in precisions and a == np.float32:
        pytest.skip("no float")
    if "double" not in precisions and np.result_type(a, b, np.float32) == np.float64:
        pytest.skip("no fp64 on this device")
    A = cmrscl.generate("stencil7:6").astype(a)
    rhs = np.arange(1, A.shape[0] + 1).astype(b)
    for method in ("cg", "gmres"):
        theirs, _ = scipy_solve(method, A, rhs, 1e-4)
        ours, info = getattr(la, method)(A, rhs, rtol=1e-4)
        assert info == 0 and ours.dtype == theirs.dtype == np.result_type(a, b, np.float32)
        # a Matrix of another precision: x in numpy's promotion all the same
        mat = cmrscl.Matrix(A, "float" if a == np.float32 else "double", context)
        ours, info = getattr(la, method)(mat, rhs, rtol=1e-4)
        assert ours.dtype == theirs.dtype


def _kinds(A):
    D = 1.0 / A.diagonal()
    return {"sparse": scipy.sparse.diags(D).tocsr(), "dense": np.diag(D),
            "LinearOperator": sla.aslinearoperator(scipy.sparse.diags(D)),
            "callable": lambda r: D * np.ravel(r)}


@pytest.mark.parametrize("method", ["cg", "bicgstab", "gmres"])
@pytest.mark.parametrize("kind", ["sparse", "dense", "LinearOperator", "callable", "Matrix"])
def test_preconditioner_kinds_as_scipy(context, poisson, nonsymmetric, method, kind):
    A, mat, b = poisson if method == "cg" else nonsymmetric
    kinds = _kinds(A)
    kinds["Matrix"] = cmrscl.Matrix(kinds["sparse"], "double", context)
    M = kinds[kind]
    theirs, their_info = scipy_solve(method, A, b, 1e-10, M=kinds["sparse"])
    ours, info = getattr(la, method)(mat, b, rtol=1e-10, M=M)
    assert info == their_info == 0
    assert np.allclose(ours, theirs, rtol=1e-7, atol=1e-9)
    assert np.linalg.norm(A @ ours - b) <= 1e-10 * np.linalg.norm(b)


def test_host_path_converged_only_on_the_true_residual(poisson, monkeypatch):
    """scipy's algorithm saying converged is checked by a product afterwards."""
    A, mat, b = poisson
    monkeypatch.setattr(la.sla, "cg", lambda A, b, **kw: (np.zeros_like(b), 0))
    x, info = la.cg(mat, b, M=scipy.sparse.identity(A.shape[0]), maxiter=7)
    assert info == 7
    x, info = la.cg(mat, b, M=scipy.sparse.identity(A.shape[0]))
    assert info == 10 * A.shape[0]


def _distinct_calls(run):
    """Calls of a callback, a repeat of the iterate just seen not counted (scipy < 1.12 calls
    cg's and bicgstab's once more at the end with the last iterate)."""
    seen = []

    def callback(xk):
        xk = np.array(xk)
        if not seen or not np.array_equal(seen[-1], xk):
            seen.append(xk)
    run(callback)
    return len(seen)


@pytest.mark.parametrize("method", ["cg", "bicgstab"])
def test_callback_once_an_iteration(poisson, nonsymmetric, method):
    A, mat, b = poisson if method == "cg" else nonsymmetric
    calls, last = [], []

    def callback(xk):
        calls.append(len(xk))
        last[:] = [xk.copy()]
    x, result = la.solve(mat, b, method=method, rtol=1e-10, callback=callback)
    assert result.converged and len(calls) == result.iterations
    assert np.array_equal(last[0], x)
    x2, info = getattr(la, method)(mat, b, rtol=1e-10, callback=lambda xk: calls.append(0))
    assert info == 0 and len(calls) == 2 * result.iterations and np.array_equal(x, x2)
    theirs = _distinct_calls(lambda cb: scipy_solve(method, A, b, 1e-10, callback=cb))
    assert abs(len(calls) // 2 - theirs) <= 1 + 0.05 * theirs, (len(calls) // 2, theirs)


@pytest.mark.parametrize("method", ["cg", "bicgstab"])
def test_callback_sees_each_iterate(poisson, nonsymmetric, method):
    # the device runs ahead of the callback (the next product) but never past x's next update:
    # x_k in the callback is the x that a solve stopped after k iterations returns
    A, mat, b = poisson if method == "cg" else nonsymmetric
    seen = []
    getattr(la, method)(mat, b, rtol=1e-12, maxiter=6, callback=lambda xk: seen.append(xk.copy()))
    assert len(seen) == 6
    for k in (1, 2, 5):
        xk, info = getattr(la, method)(mat, b, rtol=1e-12, maxiter=k)
        assert info == k and np.array_equal(seen[k - 1], xk), k
    assert not np.array_equal(seen[0], seen[1])


def test_gmres_callback_counts(nonsymmetric):
    A, mat, b = nonsymmetric
    norms = []
    x, result = la.solve(mat, b, method="gmres", rtol=1e-10, restart=10, callback=norms.append)
    assert result.converged and len(norms) == result.iterations and norms[-1] <= 1e-10
    theirs = []
    scipy_solve("gmres", A, b, 1e-10, restart=10, callback=theirs.append,
                callback_type="pr_norm")
    assert abs(len(norms) - len(theirs)) <= 2, (len(norms), len(theirs))
    iterates = []
    x, info = la.gmres(mat, b, rtol=1e-10, restart=10, callback=iterates.append,
                       callback_type="x")  # once a cycle, scipy's own
    theirs = []
    scipy_solve("gmres", A, b, 1e-10, restart=10, callback=theirs.append, callback_type="x")
    assert info == 0 and len(iterates) == len(theirs)


def test_callback_iterate_reads_on_use(poisson):
    A, mat, b = poisson
    seen = []

    def callback(xk):
        if not seen:
            # read nothing: shape and dtype, then a read, kept for the callback's rest
            assert xk.shape == b.shape and xk.dtype == np.float64 and len(xk) == b.size
            assert repr(xk).endswith("(not read)>")
            first = np.asarray(xk)
            assert np.asarray(xk) is first and float(xk.max()) == first.max()
            assert np.allclose(xk + 1, first + 1) and np.allclose(2 * xk, 2 * first)
            assert np.allclose(np.linalg.norm(xk), np.linalg.norm(first))
        seen.append(xk)
    la.cg(mat, b, rtol=1e-8, callback=callback)
    with pytest.raises(RuntimeError, match="during the callback"):
        np.asarray(seen[-1])
    assert seen[-1].shape == b.shape  # still known
    # an exception in the callback: raised after the solve, the callback called no more
    calls = []

    def boom(xk):
        calls.append(1)
        raise KeyError("stop")
    with pytest.raises(KeyError):
        la.cg(mat, b, callback=boom)
    assert len(calls) == 1


def test_amg_on_the_device(context):
    """cg with M="amg" (and an AMG made once) on the device: converged with b - A x at the
    threshold in far fewer iterations than CG; the AMG as M of scipy's own cg."""
    A = cmrscl.generate("stencil5:64")
    b = np.ones(A.shape[0])
    mat = cmrscl.Matrix(A, "double", context)
    x, plain = la.solve(mat, b, rtol=1e-8)
    x, result = la.solve(mat, b, rtol=1e-8, M="amg")
    assert result.converged and result.iterations * 4 < plain.iterations
    assert np.linalg.norm(b - A @ x) <= 1e-8 * np.linalg.norm(b) * 1.0001
    M = la.amg(mat)
    assert M.levels >= 2 and M.rows[0] == A.shape[0] and M.rows[-1] < A.shape[0]
    assert 1 < M.operator_complexity < 2 and M.setup_seconds["total"] > 0 and M.theta == 0
    # a power-law graph's Laplacian: theta 0 takes 0.25 there (its hubs), the hierarchy sparse
    H = cmrscl.generate("lap:rmat:11:16")
    Mh = la.amg(cmrscl.Matrix(H, "double", context))
    assert Mh.theta == 0.25 and Mh.operator_complexity < 1.5
    assert la.amg(cmrscl.Matrix(H, "double", context), theta=1e-12).theta == 1e-12
    x, info = la.cg(mat, b, rtol=1e-8, M=M)
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1.0001e-8 * np.linalg.norm(b)
    count = [0]
    x, info = scipy_solve("cg", A, b, 1e-8, M=M,
                          callback=lambda _: count.__setitem__(0, count[0] + 1))
    assert info == 0 and count[0] <= result.iterations + 2
    with pytest.raises(ValueError, match="square"):
        la.amg(scipy.sparse.random(10, 12, density=0.5, format="csr"))
    # mixed precision: the cycle in float, the solve in double to the same threshold
    Mf = la.amg(mat, float_cycle=True)
    assert Mf.cycle_dtype == np.float32 and M.cycle_dtype == np.float64
    # M multiplies level 0 by mat itself; the float cycle by mat rounded (its values alone)
    assert 0 < Mf.device_bytes < 0.75 * (M.device_bytes + mat.params()["device_bytes"])
    x, info = la.cg(mat, b, rtol=1e-8, M=Mf)
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1.0001e-8 * np.linalg.norm(b)
    with pytest.raises(TypeError, match="float_cycle"):
        la.amg(mat, float_cycle="yes")
    # a Chebyshev smoother of degree 3: fewer iterations than Jacobi's, the same threshold
    x, cheb = la.solve(mat, b, rtol=1e-8, M=la.amg(mat, chebyshev=3))
    assert cheb.converged and cheb.iterations <= result.iterations
    assert np.linalg.norm(b - A @ x) <= 1.0001e-8 * np.linalg.norm(b)
    with pytest.raises(ValueError, match="chebyshev 1"):
        la.amg(mat, chebyshev=1)
    # a W-cycle (three levels: level 1 corrected twice): fewer iterations than the V-cycle's
    Mw = la.amg(mat, cycle="w")
    x, w = la.solve(mat, b, rtol=1e-8, M=Mw)
    assert Mw.cycle == "W" and M.cycle == "V" and Mw.levels >= 3 and w.converged
    assert w.iterations < result.iterations
    assert np.linalg.norm(b - A @ x) <= 1.0001e-8 * np.linalg.norm(b)
    with pytest.raises(ValueError, match="cycle must be 'V' or 'W'"):
        la.amg(mat, cycle="F")


def test_bicgstab_with_amg(context):
    """BiCGStab and GMRES with AMG on the right, on the device: a nonsymmetric matrix to rtol
    on ||b - A x||, in fewer than half the method's iterations alone."""
    A = cmrscl.generate("convdiff:24")
    b = np.ones(A.shape[0])
    mat = cmrscl.Matrix(A, "double", context)
    x, alone = la.solve(mat, b, method="bicgstab", rtol=1e-8)
    x, result = la.solve(mat, b, method="bicgstab", rtol=1e-8, M="amg")
    assert result.converged and 2 * result.iterations < alone.iterations
    assert np.linalg.norm(b - A @ x) <= 1.0001e-8 * np.linalg.norm(b)
    x, info = la.bicgstab(mat, b, rtol=1e-8, M=la.amg(mat))
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1.0001e-8 * np.linalg.norm(b)
    x, result = la.solve(mat, b, method="gmres", rtol=1e-8, M="amg", restart=10)
    assert result.converged and np.linalg.norm(b - A @ x) <= 1.0001e-8 * np.linalg.norm(b)
    _, alone = la.solve(mat, b, method="gmres", rtol=1e-8, restart=10)
    assert 2 * result.iterations < alone.iterations
    x, info = la.gmres(mat, b, rtol=1e-8, M=la.amg(mat), restart=10)
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1.0001e-8 * np.linalg.norm(b)
    # callback_type "x" runs scipy's gmres on the host, with M="amg" made an AMG for it
    seen = []
    x, info = la.gmres(mat, b, rtol=1e-6, M="amg", restart=10, callback_type="x",
                       callback=lambda xk: seen.append(np.linalg.norm(b - A @ xk)))
    assert seen and np.linalg.norm(b - A @ x) < 1e-3 * np.linalg.norm(b)


def test_amg_update(context):
    """New values of the same pattern: the matrix, then its AMG, updated in place solve as an
    AMG made anew from those values (the same iterations and x)."""
    A = cmrscl.generate("stencil5:48")
    b = np.ones(A.shape[0])
    mat = cmrscl.Matrix(A, "double", context)
    M = la.amg(mat)
    A2 = (2 * A + 0.5 * scipy.sparse.identity(A.shape[0], format="csr")).tocsr()
    A2.sort_indices()
    mat.update_values(A2)
    M.update()
    x, result = la.solve(mat, b, rtol=1e-8, M=M)
    fresh = la.amg(cmrscl.Matrix(A2, "double", context))
    x2, again = la.solve(fresh.matrix, b, rtol=1e-8, M=fresh)
    assert result.converged and result.iterations == again.iterations
    assert np.array_equal(x, x2)
    assert np.linalg.norm(b - A2 @ x) <= 1.0001e-8 * np.linalg.norm(b)

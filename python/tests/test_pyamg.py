"""cmrscl's AMG against PyAMG, the algorithmic reference (smoothed_aggregation_solver), set up
the same way: symmetric strength with theta 0, standard aggregation, the constant near-null
space not improved, P smoothed by Jacobi with omega 4/3 / rho, max_coarse 500, one damped
Jacobi sweep (4/3 / rho) before and after the coarse correction, the coarsest level solved
densely.

- CG's iterations to rtol 1e-8 with each V-cycle within 25% of PyAMG's;
- PyAMG's hierarchy built on cmrscl's aggregates ('predefined') with cmrscl's estimates of
  rho(D^-1 A) (PyAMG's own start from a random vector): the same levels, sizes and entries,
  and one V-cycle's z = M r the same to rounding, with smoothed and with plain aggregation.

Skipped, and said so, where PyAMG is not installed (CI's venv has it)."""
import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg as sla

import cmrscl
import cmrscl.linalg as la

pyamg = pytest.importorskip("pyamg", reason="PyAMG is not installed: these checks did not run")

JACOBI = ("jacobi", {"omega": 4.0 / 3.0, "iterations": 1})
SETTINGS = dict(strength=("symmetric", {"theta": 0.0}), smooth=("jacobi", {"omega": 4.0 / 3.0}),
                presmoother=JACOBI, postsmoother=JACOBI, improve_candidates=None,
                max_coarse=500, max_levels=10, coarse_solver="pinv")


def generated(spec):
    """A generated matrix as PyAMG takes it: a scipy matrix (not an array) of 32-bit indices
    (PyAMG 5.2's kernels refuse 64-bit ones)."""
    G = cmrscl.generate(spec)
    return scipy.sparse.csr_matrix((G.data, G.indices.astype(np.int32),
                                    G.indptr.astype(np.int32)), shape=G.shape)


def pcg_iterations(A, M):
    b = A @ (1.0 + (np.arange(A.shape[0]) % 7) / 7.0)
    count = [0]

    def step(_):
        count[0] += 1
    kw = {"rtol": 1e-8}
    try:
        sla.cg(A[:2, :2], b[:2], rtol=1e-8, maxiter=1)
    except TypeError:  # scipy < 1.12 spells it tol
        kw = {"tol": 1e-8}
    x, info = sla.cg(A, b, maxiter=500, M=M, callback=step, atol=0.0, **kw)
    assert info == 0
    return count[0]


@pytest.fixture(params=["stencil5:64", "stencil7:20", "stencil27:12"])
def problem(request, context):
    A = generated(request.param)
    return request.param, A, la.amg(cmrscl.Matrix(A, "double", context))


def test_iterations_as_pyamg(problem):
    spec, A, M = problem
    ours = pcg_iterations(A, M)
    ml = pyamg.smoothed_aggregation_solver(A, aggregate="standard", **SETTINGS)
    theirs = pcg_iterations(A, ml.aspreconditioner(cycle="V"))
    print(f"{spec}: CG iterations with cmrscl's V-cycle {ours}, PyAMG's {theirs}")
    assert abs(ours - theirs) <= 0.25 * theirs, (spec, ours, theirs)


def pyamg_on(A, M, smooth):
    """PyAMG's hierarchy of A on M's aggregates ('predefined'), its smoothers weighted by M's
    spectral-radius estimates (4/3 / rho, given rather than estimated again)."""
    aggregation, smoothers = [], []
    for level in range(M.levels - 1):
        agg = M.aggregates(level)
        assert agg.min() >= 0, "a row in no aggregate: PyAMG's AggOp needs one for each"
        aggregation.append(("predefined", {"AggOp": scipy.sparse.csr_matrix(
            (np.ones(len(agg)), (np.arange(len(agg)), agg)), shape=(len(agg), M.rows[level + 1]))}))
    for level in range(M.levels):
        smoothers.append(("jacobi", {"omega": 4.0 / 3.0 / M.rho[level], "withrho": False}))
    settings = dict(SETTINGS, max_levels=M.levels, max_coarse=1, smooth=smooth,
                    presmoother=smoothers, postsmoother=smoothers)
    np.random.seed(0)  # PyAMG's estimate for its P starts from a random vector
    ml = pyamg.smoothed_aggregation_solver(A, aggregate=aggregation, **settings)
    assert [lv.A.shape[0] for lv in ml.levels] == M.rows
    assert [lv.A.nnz for lv in ml.levels] == M.entries
    return ml


def cycle_difference(A, M, ml):
    r = np.sin(1.0 + np.arange(A.shape[0]))
    ours, theirs = M @ r, ml.aspreconditioner(cycle="V") @ r
    return np.linalg.norm(ours - theirs) / np.linalg.norm(theirs)


def test_cycle_as_pyamg_on_our_aggregates(problem, monkeypatch):
    """Smoothed aggregation: PyAMG's P smoothed with cmrscl's estimate of rho(D^-1 A) too (its
    own starts from a random vector) - then the same cycle to rounding."""
    spec, A, M = problem
    rho = dict(zip(M.rows, M.rho))
    monkeypatch.setattr(pyamg.aggregation.smooth, "approximate_spectral_radius",
                        lambda S, **_: rho[S.shape[0]])
    diff = cycle_difference(A, M, pyamg_on(A, M, ("jacobi", {"omega": 4.0 / 3.0})))
    print(f"{spec}: one V-cycle on the same aggregates differs from PyAMG's by {diff:.2e}")
    assert diff < 1e-12, (spec, diff)


def test_unsmoothed_cycle_as_pyamg(context):
    """Plain aggregation (P = T): nothing estimated apart - the same cycle to rounding."""
    for spec in ("stencil5:64", "stencil7:20"):
        A = generated(spec)
        M = la.amg(cmrscl.Matrix(A, "double", context), unsmoothed=True)
        diff = cycle_difference(A, M, pyamg_on(A, M, None))
        print(f"{spec}, unsmoothed: one V-cycle differs from PyAMG's by {diff:.2e}")
        assert diff < 1e-12, (spec, diff)


@pytest.mark.parametrize("name", ["Trefethen_2000.mtx", "1138_bus.mtx"])
def test_rho_as_eigsh(name, context):
    """Level 0's estimate of rho(D^-1 A) against ARPACK's (scipy's eigsh on D^-1/2 A D^-1/2):
    from below, within 1%, as PyAMG's approximate_spectral_radius comes (Trefethen_2000's
    clustered top is where the power method fell 22% short)."""
    from conftest import load
    A = load(name)
    d = 1.0 / np.sqrt(A.diagonal())
    exact = sla.eigsh(scipy.sparse.diags(d) @ A @ scipy.sparse.diags(d), k=1, which="LA",
                      return_eigenvectors=False, tol=1e-10)[0]
    rho = la.amg(cmrscl.Matrix(A, "double", context)).rho[0]
    print(f"{name}: rho estimate {rho:.6f}, eigsh {exact:.6f}")
    assert 0.99 * exact <= rho <= exact * (1 + 1e-9), (name, rho, exact)


def test_rigid_body_modes_as_pyamg(context):
    """3-D elasticity (elastic:10) with the six rigid-body modes as B and nodes of 3 unknowns:
    CG's iterations within 25% of PyAMG's on the same settings (B, BSR blocks of 3), and under
    half of those with the constant vector alone - the modes are what elasticity needs."""
    n = 10
    m = n + 1
    A = generated(f"elastic:{n}")
    p = np.arange(m ** 3)
    B = la.rigid_body_modes(np.stack([p % m, p // m % m, p // (m * m)], axis=1))
    assert B.shape == (A.shape[0], 6)
    away = np.repeat(p % m >= 2, 3)  # rows whose points do not touch the clamped face x = 0
    assert np.abs((A @ B)[away]).max() < 1e-10 * np.abs(A).max()
    mat = cmrscl.Matrix(A, "double", context)
    ours = pcg_iterations(A, la.amg(mat, B=B, block_size=3))
    constant = pcg_iterations(A, la.amg(mat))
    ml = pyamg.smoothed_aggregation_solver(A.tobsr(blocksize=(3, 3)), B=B, aggregate="standard",
                                           **SETTINGS)
    theirs = pcg_iterations(A, ml.aspreconditioner(cycle="V"))
    print(f"elastic:{n}: CG iterations with the modes {ours} (PyAMG {theirs}), constant {constant}")
    assert abs(ours - theirs) <= 0.25 * theirs and 2 * ours <= constant, (ours, theirs, constant)
    with pytest.raises(ValueError, match="rows x k"):
        la.amg(mat, B=B[:-1])


def test_rigid_body_cycle_as_pyamg_on_our_aggregates(context, monkeypatch):
    """The rigid-body modes' hierarchy (k = 6, nodes of 3): on our aggregates (a node's, as
    PyAMG's BSR aggregation takes them) and with our estimates of rho, one V-cycle is PyAMG's
    to rounding - the tentative prolongator's columns, their order and the coarse candidates
    as fit_candidates makes them."""
    n = 6
    m = n + 1
    A = generated(f"elastic:{n}")
    p = np.arange(m ** 3)
    B = la.rigid_body_modes(np.stack([p % m, p // m % m, p // (m * m)], axis=1))
    M = la.amg(cmrscl.Matrix(A, "double", context), B=B, block_size=3, max_levels=2)
    assert M.levels == 2, M.rows
    agg = M.aggregates(0)[::3]  # each node's: its three unknowns share it
    count = int(agg.max()) + 1
    assert M.rows[1] == 6 * count  # no candidate dropped on these aggregates
    inside = np.flatnonzero(agg >= 0)  # the clamped points (identity rows) are in none
    aggop = scipy.sparse.csr_matrix((np.ones(len(inside)), (inside, agg[inside])),
                                    shape=(len(agg), count))
    rho = dict(zip(M.rows, M.rho))
    monkeypatch.setattr(pyamg.aggregation.smooth, "approximate_spectral_radius",
                        lambda S, **_: rho[S.shape[0]])
    smoothers = [("jacobi", {"omega": 4.0 / 3.0 / r, "withrho": False}) for r in M.rho]
    settings = dict(SETTINGS, max_levels=2, max_coarse=1, presmoother=smoothers,
                    postsmoother=smoothers)
    ml = pyamg.smoothed_aggregation_solver(A.tobsr(blocksize=(3, 3)), B=B,
                                           aggregate=[("predefined", {"AggOp": aggop})],
                                           **settings)
    assert [lv.A.shape[0] for lv in ml.levels] == M.rows
    diff = cycle_difference(A, M, ml)
    print(f"elastic:{n}, the rigid-body modes: one V-cycle differs from PyAMG's by {diff:.2e}")
    assert diff < 1e-10, diff

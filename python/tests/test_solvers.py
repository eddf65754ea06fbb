"""scipy's solvers through the LinearOperator view converge, and a CG whose vectors never
leave the device (pyopencl arrays sharing cmrscl's queue) agrees with them."""
import os

import numpy as np
import pytest
import scipy.sparse.linalg as sla

import cmrscl
from conftest import load


def test_cg_poisson(context):
    A = cmrscl.generate("stencil7:16")
    M = cmrscl.Matrix(A, "double", context)
    b = np.ones(A.shape[0])
    x, info = sla.cg(M.aslinearoperator(), b, atol=0, maxiter=500)
    assert info == 0
    assert np.linalg.norm(A @ x - b) <= 1e-4 * np.linalg.norm(b)  # scipy's default 1e-5


def test_eigsh_and_lsqr(context):
    A = load("1138_bus.mtx")
    M = cmrscl.Matrix(A, "double", context)
    ours = np.sort(sla.eigsh(M.aslinearoperator(), k=3, which="LM", tol=1e-10)[0])
    theirs = np.sort(sla.eigsh(A, k=3, which="LM", tol=1e-10)[0])
    assert np.allclose(ours, theirs, rtol=1e-8)
    B = load("illc1850.mtx")  # tall: lsqr needs the transposed product
    N = cmrscl.Matrix(B, "double", context)
    b = np.ones(B.shape[0])
    ours = sla.lsqr(N.aslinearoperator(), b, atol=1e-12, btol=1e-12, iter_lim=4000)[0]
    theirs = sla.lsqr(B, b, atol=1e-12, btol=1e-12, iter_lim=4000)[0]
    assert np.linalg.norm(B.T @ (B @ ours - b)) <= 1e-6 * np.linalg.norm(B.T @ b)
    assert np.allclose(B @ ours, B @ theirs, rtol=1e-6, atol=1e-8)


def test_gmres_block_operator(context):
    A = load("cage8.mtx")
    op = cmrscl.Matrix(A, "double", context).aslinearoperator()
    b = np.ones(A.shape[0])
    x, info = sla.gmres(op, b, atol=0, restart=50, maxiter=200)
    assert info == 0 and np.linalg.norm(A @ x - b) <= 1e-4 * np.linalg.norm(b)
    X = np.random.default_rng(0).uniform(size=(A.shape[1], 3))
    assert np.allclose(op.matmat(X), A @ X, rtol=1e-12, atol=1e-14)


def test_cg_on_device_with_pyopencl():
    cl = pytest.importorskip("pyopencl", reason="pyopencl is not installed: the device "
                             "vectors of another OpenCL package are not tested")
    import pyopencl.array as cla

    ctx = cmrscl.Context(os.environ.get("CMRSCL_DEVICE"))
    platform = [p for p in cl.get_platforms() if p.name == ctx.device.platform][0]
    device = [d for d in platform.get_devices() if d.name == ctx.device.name][0]
    cl_context = cl.Context([device])  # held here: with Intel's runtime, a context held only
    # by its queue was no longer valid when pyopencl asked the queue for it
    queue = cl.CommandQueue(cl_context)
    shared = cmrscl.Context.from_pyopencl(queue)
    A = cmrscl.generate("stencil7:12")
    M = cmrscl.Matrix(A, "float" if not shared.device.fp64 else "double", shared)
    b = cla.to_device(queue, np.ones(A.shape[0], M.dtype))
    x = cla.zeros_like(b)
    r, q = b.copy(), cla.empty_like(b)
    p, rr = r.copy(), cla.dot(r, r).get()
    for iteration in range(400):  # plain CG: every vector stays on the device
        M.matvec(p, y=q)
        alpha = rr / cla.dot(p, q).get()
        x += alpha * p
        r -= alpha * q
        rr, rr_old = cla.dot(r, r).get(), rr
        if np.sqrt(rr) < 1e-6 * np.sqrt(A.shape[0]):
            break
        p = r + (rr / rr_old) * p
    residual = np.linalg.norm(A @ x.get().astype(np.float64) - 1.0) / np.sqrt(A.shape[0])
    assert residual < 1e-4, f"{iteration} iterations, residual {residual}"
    ctx.close()

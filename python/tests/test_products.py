"""Products against scipy's in double: every test matrix, both precisions, one vector and
blocks in both orders, the transposed product, device arrays, updates and the plan."""
import numpy as np
import pytest
import scipy.sparse

import cmrscl
from conftest import FILES, SPECS, assert_product, load


def vectors(n, k=None, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, n if k is None else (n, k))


@pytest.mark.parametrize("name", FILES + SPECS)
def test_matvec_every_matrix(context, precisions, name):
    A = load(name)
    x, y0 = vectors(A.shape[1]), vectors(A.shape[0], seed=1)
    for precision in precisions:
        M = cmrscl.Matrix(A, precision, context)
        assert M.dtype == (np.float32 if precision == "float" else np.float64)
        xp = x.astype(M.dtype)  # the rounded x is what the device multiplies
        assert_product(A, xp, M @ x, precision=precision)
        # the C tests' grid: a general pair, a solver's y += alpha A x, y kept, y0 - A x
        for alpha, beta in [(-0.5, 2.0), (2.5, 1.0), (0.0, 1.0), (1.0, -1.0)]:
            y = y0.astype(M.dtype)
            result = M.matvec(x, alpha=alpha, beta=beta, y=y)
            assert result is y  # updated in place
            assert_product(A, xp, y, alpha, beta, y0.astype(M.dtype), precision)
        xt = vectors(A.shape[0], seed=2).astype(M.dtype)
        assert_product(A.T, xt, M.T @ xt, precision=precision)
        yt0 = vectors(A.shape[1], seed=3)
        for alpha, beta in [(2.5, 1.0), (1.0, -1.0)]:  # the transposed product's beta too
            yt = yt0.astype(M.dtype)
            M.rmatvec(xt, alpha, beta, yt)
            assert_product(A.T, xt, yt, alpha, beta, yt0.astype(M.dtype), precision)
        M.close()


@pytest.mark.parametrize("kernel,height", [("strip", 4), ("segment", 16), ("slice", 8),
                                           ("modulo", 16)])
def test_every_family(context, precisions, kernel, height):
    """Each kernel family by its options (a CPU's automatic plan takes one of them), on a real
    matrix and one with empty rows, for the C tests' (alpha, beta) pairs, in the widest
    precision."""
    precision = precisions[-1]
    opts = {"modulo": 8, "reduce": "local"} if kernel == "modulo" else {}
    for name in ["west0479.mtx", "rmat:11:4"]:
        A = load(name)
        M = cmrscl.Matrix(A, precision, context, kernel=kernel, height=height, **opts)
        assert M.plan["kernel"] == kernel, M.plan
        x, y0 = vectors(A.shape[1]).astype(M.dtype), vectors(A.shape[0], seed=1)
        assert_product(A, x, M @ x, precision=precision)
        for alpha, beta in [(-1.5, 0.5), (2.5, 1.0), (0.0, 1.0), (1.0, -1.0)]:
            y = y0.astype(M.dtype)
            M.matvec(x, alpha=alpha, beta=beta, y=y)
            assert_product(A, x, y, alpha, beta, y0.astype(M.dtype), precision)
        M.close()


@pytest.mark.parametrize("name", ["cage8.mtx", "skewed:3000:4:3:2500"])
def test_block_orders_and_views(context, name):
    A = load(name)
    M = cmrscl.Matrix(A, "double", context, vectors=8)  # planned for blocks (any width runs)
    X = vectors(A.shape[1], 7)
    assert_product(A, X, M @ X)
    assert_product(A, X, M @ np.asfortranarray(X))
    wide = vectors(A.shape[1], 12)
    view = wide[:, 2:9]  # a leading dimension of 12, read in place
    assert_product(A, view, M @ view)
    Y0 = vectors(A.shape[0], 7, seed=3)
    Y = np.asfortranarray(Y0.copy())
    assert M.matmat(X, 2.0, -1.0, Y) is Y
    assert_product(A, X, Y, 2.0, -1.0, Y0)
    assert M.matmat(np.empty((A.shape[1], 0))).shape == (A.shape[0], 0)


def test_device_arrays(context):
    A = load("rmat:11:4")
    M = cmrscl.Matrix(A, "float", context)
    x = vectors(A.shape[1]).astype(np.float32)
    dx = context.to_device(x)
    dy = M @ dx
    assert isinstance(dy, cmrscl.DeviceArray)
    assert_product(A, x, dy.get(), precision="float")
    y0 = dy.get()
    M.matvec(dx, 1.0, 1.0, dy)  # y += A x on the device
    assert_product(A, x, dy.get(), 1.0, 1.0, y0, "float")
    X = vectors(A.shape[1], 5).astype(np.float32)
    DY = M @ context.to_device(X)
    assert DY.shape == (A.shape[0], 5)
    assert_product(A, X, DY.get(), precision="float")
    assert np.array_equal(context.zeros(4, np.float32).get(), np.zeros(4))
    assert np.array_equal(dx.copy().get(), x)


def test_same_bits_every_run(context):
    A = load("stencil7:14")
    x = vectors(A.shape[1])
    for options in ({}, {"kernel": "strip", "height": 4}, {"kernel": "slice"}):
        M = cmrscl.Matrix(A, "double", context, **options)
        first = M @ x
        assert all(np.array_equal(first, M @ x) for _ in range(3))
        if options:
            assert M.plan["kernel"] == options["kernel"]
        assert_product(A, x, first)


@pytest.mark.parametrize("kernel", ["strip", "segment", "slice"])
def test_diagonal_apart(context, kernel):
    """A graph Laplacian's degrees apart from its -1s (values "diagonal", which the slices take
    by themselves): every family gives the plain values' y bit for bit, A^T's product too, and
    an update stores them plain."""
    rng = np.random.default_rng(4)
    n = 3000
    G = scipy.sparse.triu(scipy.sparse.random(n, n, density=8 / n, random_state=rng), k=1)
    G = ((G + G.T) > 0).astype(np.float64)
    A = (scipy.sparse.diags(np.asarray(G.sum(axis=1)).ravel() + 0.3) - G).tocsr()
    x = vectors(n)
    for precision in ("double", "float"):
        if kernel == "slice":
            assert cmrscl.Matrix(A, precision, context, kernel=kernel).plan["values"] == "diagonal"
        M = cmrscl.Matrix(A, precision, context, kernel=kernel, values="diagonal")
        P = cmrscl.Matrix(A, precision, context, kernel=kernel, values="plain")
        assert M.plan["values"] == "diagonal" and P.plan["values"] == "plain", M.plan_reason
        assert M.plan["device_bytes"] < P.plan["device_bytes"]
        assert np.array_equal(M @ x, P @ x)
        assert_product(A, x.astype(M.dtype), M @ x, precision=precision)
        assert np.array_equal(M.T @ x, P.T @ x)
        M.update_values(2.0 * A.data)
        assert M.plan["values"] == "plain"
        assert_product(2.0 * A, x.astype(M.dtype), M @ x, precision=precision)
        M.close(), P.close()


def test_plan_reads_back(context):
    A = load("cage8.mtx")
    M = cmrscl.Matrix(A, "double", context)
    plan = M.plan
    assert (plan["rows"], plan["cols"], plan["nnz"]) == (A.shape[0], A.shape[1], A.nnz)
    assert plan["precision"] == "double" and plan["kernel"] in ("strip", "segment", "slice")
    assert plan["plan_reason"] and "-DHEIGHT=" in plan["build_options"]
    assert plan["stats"]["mu"] == pytest.approx(A.nnz / A.shape[0])
    assert plan["transpose_device_bytes"] == 0
    assert plan["block_vectors"] in (16, 32, 64)
    assert plan["renumber"] == "none"  # the struct's last field
    transposed = M.prepare_transpose()
    assert transposed["rows"] == A.shape[1] and transposed["nnz"] == A.nnz
    assert M.plan["transpose_device_bytes"] > 0
    M.release_transpose()
    assert M.plan["transpose_device_bytes"] == 0


def test_implied_columns(context):
    A = cmrscl.generate("dense:200")  # every row one run of columns
    M = cmrscl.Matrix(A, "double", context, kernel="strip", height=1,
                      column_bits=cmrscl.COLUMNS_IMPLIED)
    assert M.plan["column_bits"] == 0 and "columns implied" in M.plan["plan_reason"]
    x = vectors(A.shape[1])
    assert_product(A, x, M @ x)
    B = A.copy()
    B.data = np.linspace(-1, 1, B.nnz)
    M.update_values(B)
    assert_product(B, x, M @ x)
    with pytest.raises(cmrscl.Error, match="one ascending run"):
        cmrscl.Matrix(load("cage8.mtx"), "double", context, kernel="strip", height=1,
                      column_bits=cmrscl.COLUMNS_IMPLIED)


def test_update_values(context):
    A = load("1138_bus.mtx")
    M = cmrscl.Matrix(A, "double", context)
    B = A.copy()
    B.data = np.linspace(1, 2, B.nnz)
    x = vectors(A.shape[1])
    M.update_values(B.data)
    assert_product(B, x, M @ x)
    M.update_values(A)  # a sparse matrix of the same pattern
    assert_product(A, x, M @ x)


def test_renumbered(context):
    """renumber="hubs": P A P^T on the device, products, updates and CG in the caller's
    numbering; the block product refused with the reason."""
    A = cmrscl.generate("lap:rmat:9:8")
    M = cmrscl.Matrix(A, "double", context, renumber="hubs")
    assert M.plan["renumber"] == "hubs" and "renumbered" in M.plan_reason
    x = vectors(A.shape[1])
    assert_product(A, x, M @ x)
    assert_product(A.T.tocsr(), x, M.matvec(x, transpose=True))
    B = A.copy()
    B.data = B.data * np.linspace(1, 2, B.nnz)
    M.update_values(B.data)
    assert_product(B, x, M @ x)
    b = A @ x
    M.update_values(A.data)
    solution, info = cmrscl.linalg.cg(M, b, rtol=1e-10)
    assert info == 0 and np.linalg.norm(b - A @ solution) <= 1e-10 * np.linalg.norm(b) * 1.01
    with pytest.raises(cmrscl.Error, match="block product"):
        M @ vectors(A.shape[1], 3)
    with pytest.raises(ValueError, match="renumber"):
        cmrscl.Matrix(A, "double", context, renumber="degree")


def test_triple_and_generate(context):
    A = cmrscl.generate("stencil5:10")
    assert A.shape == (100, 100) and A.nnz == 460 and A.diagonal().min() == 4
    M = cmrscl.Matrix((A.data, A.indices, A.indptr), context=context, shape=A.shape)
    x = vectors(100)
    assert_product(A, x, M @ x)
    M64 = cmrscl.Matrix(scipy.sparse.csr_matrix(A, dtype=np.float32), context=context)
    assert M64.dtype == np.float32  # float32 values: float unless asked otherwise


def test_versions():
    assert cmrscl.library_version() == cmrscl.__version__
    assert cmrscl.devices()


def test_threads_share_a_matrix(context):
    """Products from several threads at once (ctypes lets go of the GIL in each call; the
    library serialises one matrix's launches): every result right."""
    from concurrent.futures import ThreadPoolExecutor

    A = load("rajat01.mtx")
    M = cmrscl.Matrix(A, "double", context)
    xs = [vectors(A.shape[1], seed=s) for s in range(16)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda x: M @ x, xs))
    for x, y in zip(xs, results):
        assert_product(A, x, y)


def test_awkward_blocks_and_outputs(context):
    """Size-1 dimensions, a Fortran Y of one vector, a strided Y whose other columns must
    stay untouched, and what scipy's LinearOperator passes: (n, 1) vectors, A^H blocks."""
    A = load("illc1850.mtx")  # rectangular: the transposed products differ in shape
    M = cmrscl.Matrix(A, "double", context)
    x = vectors(A.shape[1])
    assert_product(A, x[:, None], M @ x[:, None])
    Y = np.zeros((A.shape[0], 1), order="F")
    assert_product(A, x[:, None], M.matmat(x[:, None], Y=Y))
    B = np.full((A.shape[0], 8), 7.0)
    X = vectors(A.shape[1], 4)
    M.matmat(X, Y=B[:, 2:6])
    assert_product(A, X, B[:, 2:6])
    assert np.all(B[:, :2] == 7.0) and np.all(B[:, 6:] == 7.0)
    op = M.aslinearoperator()
    assert_product(A, x, op.matvec(x[:, None]).ravel())
    xt = vectors(A.shape[0], 2)
    assert np.allclose(op.H @ xt, A.T @ xt, rtol=1e-12, atol=1e-14)
    empty = context.to_device(np.empty(0))
    assert empty.get().shape == (0,)


def test_wrong_outputs(context):
    A = load("cage8.mtx")
    M = cmrscl.Matrix(A, "double", context)
    with pytest.raises(TypeError, match="float array"):
        M.matvec(vectors(A.shape[1]), y=np.zeros(A.shape[0], int))
    with pytest.raises(TypeError, match="float array"):
        M.matvec(vectors(A.shape[1]), beta=1.0, y=np.zeros(A.shape[0], complex))
    with pytest.raises(ValueError, match="does not fit"):
        cmrscl.Matrix(A, context=context, height=2**32 + 16)

"""Bad input raises an exception naming the problem - never a crash or a wrong answer -
and objects die in any order."""
import gc

import numpy as np
import pytest
import scipy.sparse

import cmrscl
from conftest import assert_product, load


@pytest.fixture
def matrix(context):
    return cmrscl.Matrix(load("west0479.mtx"), "float", context)


def test_wrong_vectors(matrix):
    n = matrix.shape[1]
    with pytest.raises(ValueError, match="shape"):
        matrix @ np.ones(n + 1)
    with pytest.raises(TypeError, match="real"):
        matrix @ np.ones(n, complex)
    with pytest.raises(TypeError, match="real"):
        matrix @ np.array(["a"] * n)
    with pytest.raises(ValueError, match="beta != 0 needs y"):
        matrix.matvec(np.ones(n), beta=1.0)
    y = np.zeros(n)
    y.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        matrix.matvec(np.ones(n), y=y)
    with pytest.raises(TypeError, match="numpy array"):
        matrix.matvec(np.ones(n), y=[0.0] * n)
    with pytest.raises(ValueError, match="2-D"):
        matrix.matmat(np.ones(n))
    strided = np.ones(2 * n)[::2]  # not contiguous: copied, still right
    assert np.allclose(matrix @ strided, matrix @ np.ones(n))


def test_wrong_device_vectors(context, matrix):
    n = matrix.shape[1]
    with pytest.raises(TypeError, match="float64, the matrix float32"):
        matrix @ context.to_device(np.ones(n))
    with pytest.raises(ValueError, match="shape"):
        matrix @ context.zeros(n + 1, np.float32)
    with pytest.raises(TypeError, match="float32 or float64"):
        context.zeros(3, np.int32)
    with cmrscl.Context(context.device.selector) as other:
        with pytest.raises(ValueError, match="another context"):
            matrix @ other.zeros(n, np.float32)


def test_wrong_matrices(context):
    A = load("west0479.mtx")
    with pytest.raises(TypeError, match="scipy.sparse"):
        cmrscl.Matrix(np.ones((3, 3)), context=context)
    with pytest.raises(TypeError, match="real values"):
        cmrscl.Matrix(A.astype(complex), context=context)
    with pytest.raises(ValueError, match="precision"):
        cmrscl.Matrix(A, "half", context)
    with pytest.raises(ValueError, match="column index"):
        cmrscl.Matrix((A.data, A.indices, A.indptr), context=context, shape=(479, 100))
    with pytest.raises(ValueError, match="indptr"):
        cmrscl.Matrix((A.data[:10], A.indices, A.indptr), context=context, shape=A.shape)
    with pytest.raises(ValueError, match="indptr"):
        cmrscl.Matrix((A.data, A.indices, A.indptr[::-1].copy()), context=context, shape=A.shape)
    with pytest.raises(ValueError, match="2\\^31"):
        cmrscl.Matrix((A.data, A.indices, A.indptr), context=context, shape=(479, 2**31))
    with pytest.raises(TypeError, match="unknown option 'hieght'"):
        cmrscl.Matrix(A, context=context, hieght=4)
    with pytest.raises(ValueError, match="option kernel"):
        cmrscl.Matrix(A, context=context, kernel="fast")


def test_library_errors_carry_status_and_message(context):
    A = load("west0479.mtx")  # hundreds of distinct values: no dictionary holds them
    with pytest.raises(cmrscl.Error) as failure:
        cmrscl.Matrix(A, "double", context, values="dict")
    assert failure.value.status == -1
    assert failure.value.status_name == "CMRSCL_ERROR_INVALID_ARGUMENT"
    assert "dict" in str(failure.value).lower()
    with pytest.raises(cmrscl.Error) as failure:
        cmrscl.Matrix(A, "double", context, height=1000)
    assert failure.value.status < 0 and "height" in str(failure.value).lower()
    with pytest.raises(cmrscl.Error, match="vectors -1"):
        cmrscl.Matrix(A, "double", context, vectors=-1)
    with pytest.raises(cmrscl.Error, match="no matching|NO_DEVICE"):
        cmrscl.Context("no such device anywhere")
    with pytest.raises(cmrscl.Error, match="spec|INVALID_ARGUMENT"):
        cmrscl.generate("stencil9:3")
    with pytest.raises(ValueError, match="pattern"):
        cmrscl.Matrix(A, "double", context).update_values(scipy.sparse.eye(479, format="csr"))


def test_plan_is_a_versioned_view(context):
    """The mirror's Params tells the library its size (struct_size); the library fills that
    much and says so, and refuses a size below the struct's first version."""
    import ctypes
    from cmrscl import _lib
    M = cmrscl.Matrix(load("west0479.mtx"), "float", context)
    params = _lib.new_params()
    _lib.check(_lib.lib.cmrscl_matrix_params(M.handle(), ctypes.byref(params)))
    assert params.struct_size == ctypes.sizeof(_lib.Params) and params.rows == 479
    assert "struct_size" not in M.plan and M.plan["rows"] == 479
    params.struct_size = 8
    with pytest.raises(cmrscl.Error, match="struct_size"):
        _lib.check(_lib.lib.cmrscl_matrix_params(M.handle(), ctypes.byref(params)))


def test_closed_objects_raise(context):
    ctx = cmrscl.Context(context.device.selector)
    M = cmrscl.Matrix(load("cage8.mtx"), "float", ctx)
    d = ctx.zeros(M.shape[1], np.float32)
    ctx.close()  # closes M and d first
    for use in (lambda: M @ np.ones(M.shape[1]), lambda: d.get(), lambda: M.plan,
                lambda: ctx.zeros(3), lambda: cmrscl.Matrix(load("cage8.mtx"), context=ctx)):
        with pytest.raises(cmrscl.Error, match="closed"):
            use()
    ctx.close()  # twice: a no-op
    M.close()


def test_garbage_collected_in_any_order(context):
    for drop_context_first in (True, False):
        ctx = cmrscl.Context(context.device.selector)
        M = cmrscl.Matrix(load("cage8.mtx"), "float", ctx)
        d = ctx.to_device(np.ones(M.shape[1], np.float32))
        y = (M @ d).get()
        assert_product(load("cage8.mtx"), np.ones(M.shape[1]), y, precision="float")
        if drop_context_first:
            del ctx  # M and d keep it alive
            gc.collect()
            assert np.array_equal((M @ d).get(), y)
            del M, d
        else:
            del M, d
            gc.collect()
            del ctx
        gc.collect()

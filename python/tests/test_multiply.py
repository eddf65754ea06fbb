"""cmrscl.multiply: C = A B on the device against scipy's product and the library's host
reference, bit for bit, and what it refuses."""
import numpy as np
import pytest
import scipy.sparse

import cmrscl


def same_csr(x, y):
    """The same shape, pattern and bits."""
    return (x.shape == y.shape and np.array_equal(x.indptr, y.indptr)
            and np.array_equal(x.indices, y.indices)
            and np.array_equal(x.data.view(np.int64), y.data.view(np.int64)))


@pytest.mark.parametrize("spec", ["stencil7:10", "stencil27:6", "geo:3000:8"])
def test_square_against_scipy_and_the_host(context, spec):
    A = cmrscl.generate(spec)
    C, info = cmrscl.multiply(A, context=context, return_info=True)
    if context.device.fp64:
        assert info["on_device"], info["reason"]
    else:
        assert not info["on_device"] and "fp64" in info["reason"]
    assert C.has_canonical_format
    D = (A @ A).tocsr()
    D.sort_indices()
    assert C.shape == D.shape and np.array_equal(C.indptr, D.indptr)
    assert np.array_equal(C.indices, D.indices)
    np.testing.assert_allclose(C.data, D.data, rtol=1e-13, atol=1e-13 * abs(D.data).max())
    host = cmrscl.multiply(A, context=False)  # the reference: the same bits
    assert same_csr(C, host)


def test_rectangular_and_cancelling(context):
    A = scipy.sparse.random(40, 30, density=0.2, format="csr", random_state=1)
    B = scipy.sparse.random(30, 50, density=0.2, format="csc", random_state=2)  # any format
    C = cmrscl.multiply(A, B, context=context)
    np.testing.assert_allclose(C.toarray(), (A @ B).toarray(), rtol=1e-13, atol=1e-14)
    # [1 1] [1; -1]: the products cancel and the entry is kept, as 0
    Z = cmrscl.multiply(scipy.sparse.csr_array([[1.0, 1.0]]),
                        scipy.sparse.csr_array([[1.0], [-1.0]]), context=context)
    assert Z.nnz == 1 and Z.data[0] == 0.0


def test_refusals(context):
    A = cmrscl.generate("stencil5:4")
    with pytest.raises(ValueError, match="A's columns must be B's rows"):
        cmrscl.multiply(A, scipy.sparse.eye(5, format="csr"), context=context)
    with pytest.raises(TypeError, match="A must be a scipy.sparse matrix"):
        cmrscl.multiply(np.ones((3, 3)), context=context)
    with pytest.raises(TypeError, match="context must be a cmrscl.Context"):
        cmrscl.multiply(A, context="gpu")
    with pytest.raises(TypeError, match="complex"):
        cmrscl.multiply(scipy.sparse.csr_array(np.eye(3) * 1j), context=context)

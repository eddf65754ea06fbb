"""Shared fixtures: one context for the session (on $CMRSCL_DEVICE, as the C tests), the
repository's test matrices, and the error bound every product is checked against."""
import os
import pathlib

import numpy as np
import pytest
import scipy.io
import scipy.sparse

import cmrscl

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "suitesparse"
FILES = sorted(p.name for p in DATA.glob("*.mtx"))
# Generated matrices the real files lack: long rows that split into tiles (skewed), empty
# rows and a power-law graph (rmat), a stencil's slice layout with narrow columns.
SPECS = ["skewed:3000:4:3:2500", "rmat:11:4", "stencil7:14"]


@pytest.fixture(scope="session")
def context():
    with cmrscl.Context(os.environ.get("CMRSCL_DEVICE")) as ctx:
        yield ctx


@pytest.fixture(scope="session")
def precisions(context):
    return ["float", "double"] if context.device.fp64 else ["float"]


def load(name):
    """A test matrix as a canonical scipy CSR with float64 values."""
    if ":" in name:
        return cmrscl.generate(name)
    return scipy.sparse.csr_array(scipy.io.mmread(DATA / name), dtype=np.float64)


def assert_product(A, x, y, alpha=1.0, beta=0.0, y0=None, precision="double"):
    """y == alpha*A@x + beta*y0 within the rounding of any summation order: per row
    (row length + 10) * unit roundoff * (|alpha| |A| |x| + |beta y0|), the C tests' bound."""
    u = 2.0**-24 if precision == "float" else 2.0**-53
    A = scipy.sparse.csr_array(A, dtype=np.float64)
    x = np.asarray(x, np.float64)
    ref = alpha * (A @ x) + (beta * np.asarray(y0, np.float64) if beta else 0.0)
    scale = abs(alpha) * (abs(A) @ abs(x)) + (abs(beta * np.asarray(y0, np.float64)) if beta else 0)
    lengths = np.diff(A.indptr).reshape((-1,) + (1,) * (x.ndim - 1))
    bound = (lengths + 10) * u * scale + np.finfo(np.float64).tiny
    excess = np.abs(np.asarray(y, np.float64) - ref) / bound
    assert excess.max(initial=0) <= 1.0, f"error {excess.max():.3g} x the bound"

"""The few OpenCL calls the package makes itself (device buffers: create, write, read, fill,
release; clFinish), through the ICD loader libcmrscl is linked with. Everything else - the
context, the queue, the kernels - belongs to libcmrscl."""
import ctypes
import ctypes.util

from ._lib import Error, c_int, c_size_t, c_uint, c_uint64, c_void_p

_cl = ctypes.CDLL(ctypes.util.find_library("OpenCL") or "libOpenCL.so.1")
_P = ctypes.POINTER
_PROTOTYPES = {
    "clCreateBuffer": (c_void_p, [c_void_p, c_uint64, c_size_t, c_void_p, _P(c_int)]),
    "clEnqueueWriteBuffer": (c_int, [c_void_p, c_void_p, c_uint, c_size_t, c_size_t, c_void_p,
                                     c_uint, c_void_p, c_void_p]),
    "clEnqueueReadBuffer": (c_int, [c_void_p, c_void_p, c_uint, c_size_t, c_size_t, c_void_p,
                                    c_uint, c_void_p, c_void_p]),
    "clEnqueueFillBuffer": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t, c_size_t, c_size_t,
                                    c_uint, c_void_p, c_void_p]),
    "clEnqueueCopyBuffer": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t, c_size_t, c_size_t,
                                    c_uint, c_void_p, c_void_p]),
    "clReleaseMemObject": (c_int, [c_void_p]),
    "clFinish": (c_int, [c_void_p]),
}
for _name, (_restype, _argtypes) in _PROTOTYPES.items():
    _fn = getattr(_cl, _name)
    _fn.restype, _fn.argtypes = _restype, _argtypes

CL_MEM_READ_WRITE = 1
_OPENCL_ERROR = -10  # CMRSCL_ERROR_OPENCL: the library's code for a failed OpenCL call


def _check(code, what):
    if code != 0:
        raise Error(_OPENCL_ERROR, f"{what} failed with OpenCL error {code}",
                    "CMRSCL_ERROR_OPENCL")


def create_buffer(context, nbytes):
    code = c_int(0)
    mem = _cl.clCreateBuffer(context, CL_MEM_READ_WRITE, max(nbytes, 1), None,
                             ctypes.byref(code))
    _check(code.value, f"clCreateBuffer of {nbytes} bytes")
    return mem


def write(queue, mem, array):
    if array.nbytes == 0:  # a zero-size transfer is CL_INVALID_VALUE
        return
    _check(_cl.clEnqueueWriteBuffer(queue, mem, 1, 0, array.nbytes, array.ctypes.data, 0,
                                    None, None), "clEnqueueWriteBuffer")


def read(queue, mem, array):
    if array.nbytes == 0:
        return
    _check(_cl.clEnqueueReadBuffer(queue, mem, 1, 0, array.nbytes, array.ctypes.data, 0,
                                   None, None), "clEnqueueReadBuffer")


def fill(queue, mem, scalar, nbytes):
    """Fills with a numpy scalar's bytes (a pattern of its size); returns without waiting."""
    pattern = scalar.tobytes()
    _check(_cl.clEnqueueFillBuffer(queue, mem, pattern, len(pattern), 0, nbytes, 0, None,
                                   None), "clEnqueueFillBuffer")


def copy(queue, source, target, nbytes):
    _check(_cl.clEnqueueCopyBuffer(queue, source, target, 0, 0, nbytes, 0, None, None),
           "clEnqueueCopyBuffer")


def release(mem):
    _cl.clReleaseMemObject(mem)


def finish(queue):
    _check(_cl.clFinish(queue), "clFinish")

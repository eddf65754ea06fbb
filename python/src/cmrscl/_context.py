"""Devices, contexts and device arrays.

Lifetimes: a Context owns a libcmrscl context (an OpenCL context and in-order queue); each
Matrix and DeviceArray keeps its Context alive, so the garbage collector frees them before
it. Context.close() closes what still lives in it first. Using a closed object raises
Error, never touches freed memory; closing an object while another thread is inside a call
on it (or on its matrices and arrays) is not allowed."""
import ctypes
import weakref

import numpy as np

from . import _opencl
from ._lib import DeviceInfo, Error, c_size_t, c_void_p, check, guarded, lib, libc_free, text

_INVALID_ARGUMENT = -1  # CMRSCL_ERROR_INVALID_ARGUMENT


def closed_error(what):
    return Error(_INVALID_ARGUMENT, f"the {what} is closed", "CMRSCL_ERROR_INVALID_ARGUMENT")


class Device:
    """What libcmrscl knows of an OpenCL device (cmrscl_device_info): name, platform, type,
    selector ("P:D", what Context(device=...) takes), memory, warp width, fp64, sub-groups."""

    def __init__(self, info):
        for name, _ in DeviceInfo._fields_:
            value = getattr(info, name)
            setattr(self, name, text(value) if isinstance(value, bytes) else value)
        self.name, self.platform = self.device_name, self.platform_name
        self.type = text(lib.cmrscl_device_type_name(info.type))
        self.selector = f"{info.platform_index}:{info.device_index}"
        self.fp64 = bool(info.fp64)

    def __repr__(self):
        return f"<cmrscl.Device {self.selector} {self.name!r} ({self.type}, {self.platform!r})>"


def devices():
    """Every OpenCL device of every platform, in "P:D" order."""
    array, count = c_void_p(), c_size_t()
    check(lib.cmrscl_devices(ctypes.byref(array), ctypes.byref(count)))
    try:
        infos = ctypes.cast(array, ctypes.POINTER(DeviceInfo))
        return [Device(infos[i]) for i in range(count.value)]
    finally:
        libc_free(array)


class Context:
    """An OpenCL context and queue on one device. `device`: "P:D", a type ("gpu", "cpu"), or
    part of the device's or platform's name; None: $CMRSCL_DEVICE, else the first GPU, else
    the first device."""

    def __init__(self, device=None, *, _from_cl=None):
        if device is not None and not isinstance(device, str):
            raise TypeError(f"device must be a string such as 'gpu' or '0:0', not {device!r}")
        handle = c_void_p()
        if _from_cl is None:
            check(lib.cmrscl_context_create(device.encode() if device else None,
                                            ctypes.byref(handle)))
        else:
            check(lib.cmrscl_context_create_from_cl(_from_cl[0], _from_cl[1],
                                                    ctypes.byref(handle)))
        self._handle = handle.value
        self._free = weakref.finalize(self, lib.cmrscl_context_free, handle.value)
        self._children = weakref.WeakSet()
        cl_context, queue = c_void_p(), c_void_p()
        check(lib.cmrscl_context_cl(self._handle, ctypes.byref(cl_context), ctypes.byref(queue)))
        self._cl_context, self._queue = cl_context.value, queue.value
        info, _room = guarded(DeviceInfo)
        check(lib.cmrscl_context_device_info(self._handle, ctypes.byref(info)))
        self.device = Device(info)

    @classmethod
    def from_pyopencl(cls, queue):
        """A Context on a pyopencl CommandQueue's context and queue (both retained), so
        pyopencl arrays of that context are products' vectors without a copy."""
        return cls(_from_cl=(queue.context.int_ptr, queue.int_ptr))

    def handle(self):
        if not self._free.alive:
            raise closed_error("context")
        return self._handle

    def queue(self):
        self.handle()
        return self._queue

    def adopt(self, child):
        self.handle()
        self._children.add(child)

    def close(self):
        """Frees the context, after closing the matrices and arrays still in it."""
        for child in list(self._children):
            child.close()
        self._free()

    @property
    def closed(self):
        return not self._free.alive

    def finish(self):
        """Waits for everything enqueued on the context's queue (products on device arrays
        return without waiting)."""
        _opencl.finish(self.queue())

    def to_device(self, array, dtype=None):
        """A DeviceArray holding a copy of a numpy array (any order; stored C-contiguous)."""
        host = np.ascontiguousarray(array, dtype=dtype)
        device = DeviceArray(self, host.shape, host.dtype)
        _opencl.write(self.queue(), device.mem(), host)
        return device

    def empty(self, shape, dtype=np.float64):
        return DeviceArray(self, shape, dtype)

    def zeros(self, shape, dtype=np.float64):
        device = DeviceArray(self, shape, dtype)
        if device.nbytes:
            _opencl.fill(self.queue(), device.mem(), device.dtype.type(0), device.nbytes)
        return device

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self.closed else repr(self.device.name)
        return f"<cmrscl.Context {state}>"


def _check_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"cmrscl computes in float32 or float64, not {dtype}")
    return dtype


class DeviceArray:
    """A C-contiguous float32 or float64 array in a device buffer of a Context: products on
    device arrays are enqueued and return at once; get() waits and copies to the host."""

    def __init__(self, context, shape, dtype):
        self.context = context
        self.dtype = _check_dtype(dtype)
        self.shape = tuple(int(n) for n in np.atleast_1d(np.asarray(shape, dtype=np.int64)))
        if len(self.shape) not in (1, 2) or min(self.shape) < 0:
            raise ValueError(f"a DeviceArray is 1-D or 2-D of sizes >= 0, not {self.shape}")
        self.size = int(np.prod(self.shape))
        self.nbytes = self.size * self.dtype.itemsize
        context.handle()  # not closed
        self._mem = _opencl.create_buffer(context._cl_context, self.nbytes)
        self._free = weakref.finalize(self, _opencl.release, self._mem)
        context.adopt(self)

    @property
    def ndim(self):
        return len(self.shape)

    def mem(self):
        if not self._free.alive or self.context.closed:
            raise closed_error("device array")
        return self._mem

    def get(self):
        """A numpy copy (waits for the products enqueued before)."""
        host = np.empty(self.shape, self.dtype)
        _opencl.read(self.context.queue(), self.mem(), host)
        return host

    def set(self, array):
        host = np.ascontiguousarray(array, dtype=self.dtype)
        if host.shape != self.shape:
            raise ValueError(f"shape {host.shape} does not match the device array's {self.shape}")
        _opencl.write(self.context.queue(), self.mem(), host)

    def copy(self):
        twin = DeviceArray(self.context, self.shape, self.dtype)
        if self.nbytes:
            _opencl.copy(self.context.queue(), self.mem(), twin.mem(), self.nbytes)
        return twin

    def close(self):
        self._free()

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"<cmrscl.DeviceArray shape={self.shape} dtype={self.dtype}>"

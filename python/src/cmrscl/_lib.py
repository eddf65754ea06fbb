"""libcmrscl through ctypes: finding the library, the C structs it fills, its prototypes,
and its failures turned into exceptions.

ctypes.CDLL releases the GIL for every foreign call, so products, matrix creation and
reads run while other Python threads go on. The structs mirror include/cmrscl.h field for
field. The plan (Params) is a versioned view: its struct_size tells the library how many bytes
this mirror holds, so a newer library with a longer struct fills only those (new_params). The
device's facts (DeviceInfo) have a spare tail (_GUARD) instead, so a library newer than this
file cannot write past the Python object; tests check the fields read back sane."""
import ctypes
import ctypes.util
import os
import pathlib

c_int, c_uint, c_int32, c_int64 = ctypes.c_int, ctypes.c_uint, ctypes.c_int32, ctypes.c_int64
c_uint64, c_double, c_size_t = ctypes.c_uint64, ctypes.c_double, ctypes.c_size_t
c_char_p, c_void_p = ctypes.c_char_p, ctypes.c_void_p
_GUARD = 256


class Error(Exception):
    """A failure of libcmrscl: `status` is the library's code (negative), `status_name` its
    name (e.g. "CMRSCL_ERROR_INVALID_MATRIX"), and the message is cmrscl_last_error()."""

    def __init__(self, status, message, status_name=""):
        super().__init__(f"{message} ({status_name})" if status_name else message)
        self.status = status
        self.status_name = status_name


def _candidates():
    env = os.environ.get("CMRSCL_LIBRARY")
    if env:  # a build of the repository used in place (tests on a tree, GPU hosts)
        yield env
        return
    here = pathlib.Path(__file__).resolve().parent
    yield from sorted(str(p) for p in here.glob("libcmrscl.so*"))  # the wheel's own copy
    found = ctypes.util.find_library("cmrscl")  # an installed libcmrscl
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as exc:
            tried.append(f"{path}: {exc}")
    raise ImportError("cmrscl: cannot load libcmrscl (set CMRSCL_LIBRARY to its path, or "
                      "install the package with pip): " + ("; ".join(tried) or "not found"))


lib = _load()


class DeviceInfo(ctypes.Structure):
    _fields_ = [("platform_index", c_uint), ("device_index", c_uint),
                ("platform_name", ctypes.c_char * 128), ("device_name", ctypes.c_char * 128),
                ("device_version", ctypes.c_char * 96), ("driver_version", ctypes.c_char * 64),
                ("type", c_uint64), ("compute_units", c_uint), ("max_work_group_size", c_uint),
                ("global_mem_bytes", c_uint64), ("max_alloc_bytes", c_uint64),
                ("local_mem_bytes", c_uint64), ("local_mem_per_cu_bytes", c_uint64),
                ("resident_items_per_cu", c_uint), ("cache_bytes", c_uint64),
                ("cache_source", c_char_p), ("warp_width", c_uint), ("warp_source", c_int),
                ("fp64", c_int), ("warp_shuffle", c_int), ("subgroups", c_int),
                ("subgroup_width", c_uint), ("subgroup_widths", c_uint),
                ("subgroup_shuffle", c_int), ("subgroup_relative", c_int),
                ("subgroup_apart", c_int), ("subgroup_cl_c", c_int),
                ("nv_compute_capability", c_int)]


class Options(ctypes.Structure):
    _fields_ = [(name, c_int) for name in (
        "height", "warp", "work_group_size", "layout", "order", "reduce", "kernel", "tile",
        "modulo", "cache_hint", "lane_entries", "index_bits", "combine", "values",
        "column_bits", "vectors", "renumber")]


class MatrixStats(ctypes.Structure):
    _fields_ = [("mu", c_double), ("row_cv", c_double), ("max_row", c_int32),
                ("empty_rows", c_int32), ("col_spread", c_double)]


class Params(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("precision", c_int), ("height", c_int), ("warp", c_int),
                ("work_group_size", c_int), ("layout", c_int), ("order", c_int),
                ("reduce", c_int), ("height_source", c_char_p),
                ("build_options", ctypes.c_char * 384), ("rows", c_int32), ("cols", c_int32),
                ("strips", c_int32), ("nnz", c_int64), ("device_bytes", c_uint64),
                ("analyze_seconds", c_double), ("convert_seconds", c_double),
                ("upload_seconds", c_double), ("build_seconds", c_double),
                ("program_source", c_int), ("kernel", c_int), ("row_bits", c_int),
                ("modulo", c_int), ("lane_entries", c_int), ("cache_hint", c_int),
                ("tile", c_int32), ("tiles", c_int32), ("long_strips", c_int32),
                ("combine", c_int), ("stored_entries", c_int64), ("index_bits", c_int),
                ("values", c_int), ("dict_bits", c_int), ("dict_size", c_int),
                ("column_bits", c_int), ("bytes_per_entry_matrix", c_double),
                ("bytes_per_entry_x", c_double), ("bytes_per_entry_y", c_double),
                ("stats", MatrixStats), ("plan_reason", ctypes.c_char * 512),
                ("transpose_device_bytes", c_uint64), ("block_vectors", c_int),
                ("column_jumps", c_int64), ("renumber", c_int)]


class Timing(ctypes.Structure):
    _fields_ = [("warmup", c_int), ("repetitions", c_int), ("median_ms", c_double),
                ("min_ms", c_double), ("loop_ms", c_double)]


class SolveOptions(ctypes.Structure):
    _fields_ = [("method", c_int), ("preconditioner", c_int), ("rtol", c_double),
                ("atol", c_double), ("max_iterations", c_int), ("check_interval", c_int),
                ("restart", c_int), ("monitor", c_void_p), ("monitor_data", c_void_p),
                ("precond", c_void_p)]


class SolveResult(ctypes.Structure):
    _fields_ = [("reason", c_int), ("converged", c_int), ("iterations", c_int),
                ("residual", c_double), ("true_residual", c_double), ("b_norm", c_double),
                ("threshold", c_double), ("breakdown", c_double), ("seconds", c_double),
                ("iterate_seconds", c_double), ("launches_per_iteration", c_int),
                ("checks", c_int), ("check_interval", c_int),
                ("history", ctypes.POINTER(c_double)), ("history_length", c_int),
                ("replacements", c_int), ("true_residual_rounding", c_double)]


# cmrscl_solve_monitor: (data, iterations, residual)
MONITOR = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_double)


class AmgOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("theta", c_double), ("unsmoothed", c_int),
                ("max_coarse", c_int), ("max_levels", c_int), ("float_cycle", c_int),
                ("matrix", c_void_p), ("chebyshev", c_int), ("near_null_count", c_int),
                ("near_null", ctypes.POINTER(c_double)), ("block_size", c_int),
                ("reserved_v1", c_int), ("cycle", c_int)]


AMG_MAX_LEVELS = 16


class AmgInfo(ctypes.Structure):
    _fields_ = [("levels", c_int), ("rows", c_int32 * AMG_MAX_LEVELS),
                ("entries", ctypes.c_int64 * AMG_MAX_LEVELS),
                ("operator_complexity", c_double), ("grid_complexity", c_double),
                ("seconds_strength", c_double), ("seconds_aggregation", c_double),
                ("seconds_prolongator", c_double), ("seconds_rap", c_double),
                ("seconds_coarse", c_double), ("seconds_device", c_double),
                ("seconds_total", c_double), ("device_bytes", ctypes.c_uint64),
                ("cycle_precision", c_int), ("seconds_smoother", c_double),
                ("rho", c_double * AMG_MAX_LEVELS), ("theta", c_double)]


class Csr(ctypes.Structure):
    _fields_ = [("rows", c_int32), ("cols", c_int32), ("nnz", c_int64),
                ("row_ptr", ctypes.POINTER(c_int64)), ("col_ind", ctypes.POINTER(c_int32)),
                ("values", ctypes.POINTER(c_double))]

    @classmethod
    def view(cls, shape, indptr, indices, values):
        """A view of int64 indptr, int32 indices and float64 values (contiguous, kept alive
        by the caller while the view is used)."""
        csr = cls(rows=shape[0], cols=shape[1], nnz=len(indices))
        csr.row_ptr = indptr.ctypes.data_as(ctypes.POINTER(c_int64))
        csr.col_ind = indices.ctypes.data_as(ctypes.POINTER(c_int32))
        csr.values = values.ctypes.data_as(ctypes.POINTER(c_double))
        return csr


class MultiplyInfo(ctypes.Structure):
    _fields_ = [("on_device", c_int), ("reason", ctypes.c_char * 160),
                ("product_seconds", c_double), ("upload_seconds", c_double),
                ("seconds", c_double)]


class Variant(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("family", c_char_p), ("reduction", c_char_p),
                ("kernel", c_int), ("reduce", c_int), ("file", c_char_p)]


def new_params():
    """A Params for the library to fill: struct_size set to this mirror's size."""
    params = Params()
    params.struct_size = ctypes.sizeof(Params)
    return params


def guarded(struct_type):
    """An instance of struct_type with _GUARD spare bytes after it, for the library to fill."""
    room = (ctypes.c_char * (ctypes.sizeof(struct_type) + _GUARD))()
    return struct_type.from_buffer(room), room


# Names of the enums as the C header spells them, lower case: "slice", "subgroup", ...
# The kernel families' and the warp layer's backends' come from the library's table of
# variants (read below, once the library is loaded), so a new family needs no edit here.
ENUMS = {
    "layout": ("auto", "packed", "unpacked"),
    "order": ("auto", "rows", "columns"),
    "cache_hint": ("auto", "off", "stream"),
    "combine": ("auto", "kernel", "group", "last"),
    "values": ("auto", "plain", "float", "dict", "diagonal"),
    "renumber": ("auto", "none", "hubs"),
    "program_source": ("context", "jit", "disk"),
}
FLOAT, DOUBLE = 1, 2
ROW_MAJOR, COLUMN_MAJOR = 0, 1
NON_TRANSPOSE, TRANSPOSE = 0, 1

_P = ctypes.POINTER
_status = c_int
_PROTOTYPES = {
    "cmrscl_version_string": (c_char_p, []),
    "cmrscl_status_name": (c_char_p, [c_int]),
    "cmrscl_status_message": (c_char_p, [c_int]),
    "cmrscl_last_error": (c_char_p, []),
    "cmrscl_devices": (_status, [_P(c_void_p), _P(c_size_t)]),
    "cmrscl_device_type_name": (c_char_p, [c_uint64]),
    "cmrscl_variant_count": (c_size_t, []),
    "cmrscl_variant_get": (_P(Variant), [c_size_t]),
    "cmrscl_context_create": (_status, [c_char_p, _P(c_void_p)]),
    "cmrscl_context_create_from_cl": (_status, [c_void_p, c_void_p, _P(c_void_p)]),
    "cmrscl_context_free": (None, [c_void_p]),
    "cmrscl_context_device_info": (_status, [c_void_p, _P(DeviceInfo)]),
    "cmrscl_context_cl": (_status, [c_void_p, _P(c_void_p), _P(c_void_p)]),
    "cmrscl_matrix_create_i64": (_status, [c_void_p, c_int, c_int32, c_int32, c_void_p,
                                           c_void_p, c_void_p, _P(Options), _P(c_void_p)]),
    "cmrscl_matrix_free": (None, [c_void_p]),
    "cmrscl_matrix_params": (_status, [c_void_p, _P(Params)]),
    "cmrscl_matrix_update_values": (_status, [c_void_p, c_void_p, c_int]),
    "cmrscl_matrix_prepare_transpose": (_status, [c_void_p, _P(Options), _P(Params)]),
    "cmrscl_matrix_release_transpose": (_status, [c_void_p]),
    "cmrscl_spmv_op": (_status, [c_void_p, c_int, c_double, c_void_p, c_double, c_void_p,
                                 c_void_p, c_uint, c_void_p, c_void_p]),
    "cmrscl_spmv_host_op": (_status, [c_void_p, c_int, c_double, c_void_p, c_double,
                                      c_void_p]),
    "cmrscl_spmv_time_op": (_status, [c_void_p, c_int, c_double, c_void_p, c_double,
                                      c_void_p, c_int, c_int, _P(Timing)]),
    "cmrscl_spmm": (_status, [c_void_p, c_int, c_int, c_double, c_void_p, c_size_t, c_double,
                              c_void_p, c_size_t, c_void_p, c_uint, c_void_p, c_void_p]),
    "cmrscl_spmm_host": (_status, [c_void_p, c_int, c_int, c_double, c_void_p, c_size_t,
                                   c_double, c_void_p, c_size_t]),
    "cmrscl_spmm_time": (_status, [c_void_p, c_int, c_int, c_double, c_void_p, c_size_t,
                                   c_double, c_void_p, c_size_t, c_int, c_int, _P(Timing)]),
    "cmrscl_solver_create": (_status, [c_void_p, _P(SolveOptions), _P(c_void_p)]),
    "cmrscl_solver_solve": (_status, [c_void_p, c_void_p, c_void_p, c_void_p, c_uint, c_void_p,
                                      _P(SolveResult)]),
    "cmrscl_solver_free": (None, [c_void_p]),
    "cmrscl_precond_create_amg": (_status, [c_void_p, c_int, _P(Csr), _P(AmgOptions),
                                            _P(c_void_p)]),
    "cmrscl_precond_amg_info": (_status, [c_void_p, _P(AmgInfo)]),
    "cmrscl_precond_amg_update": (_status, [c_void_p, _P(Csr)]),
    "cmrscl_precond_amg_aggregates": (_status, [c_void_p, c_int, c_void_p]),
    "cmrscl_precond_apply": (_status, [c_void_p, c_void_p, c_void_p]),
    "cmrscl_precond_free": (None, [c_void_p]),
    "cmrscl_rigid_body_modes": (_status, [c_int32, _P(c_double), _P(c_double)]),
    "cmrscl_solve_result_free": (None, [_P(SolveResult)]),
    "cmrscl_solve_reason_name": (c_char_p, [c_int]),
    "cmrscl_csr_generate": (_status, [c_char_p, _P(Csr)]),
    "cmrscl_csr_free": (None, [_P(Csr)]),
    "cmrscl_csr_multiply": (_status, [c_void_p, _P(Csr), _P(Csr), c_int, c_void_p, _P(Csr),
                                      _P(MultiplyInfo)]),
}
for _name, (_restype, _argtypes) in _PROTOTYPES.items():
    _fn = getattr(lib, _name)
    _fn.restype, _fn.argtypes = _restype, _argtypes


def _variant_names():
    """{"kernel": ("auto", families by enum value), "reduce": (...)} from cmrscl_variant_get."""
    names = {"kernel": {0: "auto"}, "reduce": {0: "auto"}}
    for i in range(lib.cmrscl_variant_count()):
        v = lib.cmrscl_variant_get(i).contents
        names["kernel"][v.kernel] = v.family.decode()
        names["reduce"][v.reduce] = v.reduction.decode()
    return {key: tuple(by.get(k, str(k)) for k in range(max(by) + 1))
            for key, by in names.items()}


ENUMS.update(_variant_names())
libc_free = ctypes.CDLL(None).free
libc_free.argtypes, libc_free.restype = [c_void_p], None


def text(raw):
    return raw.decode("utf-8", "replace") if raw else ""


def check(status):
    """Raises Error for a failing status, with the calling thread's last error message."""
    if status != 0:
        message = text(lib.cmrscl_last_error()) or text(lib.cmrscl_status_message(status))
        raise Error(status, message, text(lib.cmrscl_status_name(status)))

"""tilec: Python bindings of libtilec (ctypes, no compiler needed at install).

    import numpy as np, tilec
    prog = tilec.compile_file("samples/gemm.tile", defines={"BK": 32})
    print(prog.code)           # the CUDA C
    print(prog.layouts)        # every inferred layout, CuTe form included
    gemm = prog["gemm"]
    gemm.run_cpu(A, B, C)      # NumPy arrays: the emitted code on the CPU target
    gemm.launch(A, B, C)       # CUDA tensors (PyTorch, CuPy, ...): NVRTC + the driver

Sizes (M, N, K, ...) are taken from the tensors' shapes, stride symbols (a
parameter A: f16[M, K] strides(lda, 1)) from their strides; dtypes, ranks,
constant extents and strides (dense row-major unless the parameter has
strides(...)) are checked against the kernel's parameters before anything runs.
Errors raise TilecError.
"""

import ctypes
import ctypes.util
import os
import struct

__all__ = ["TilecError", "Program", "Kernel", "Param", "Jit", "compile", "compile_file",
           "library", "version"]

# ---- the library --------------------------------------------------------------------

_STATUS = {0: "TILEC_OK", -1: "TILEC_ERR_ARG", -2: "TILEC_ERR_NOLIB", -3: "TILEC_ERR_COMPILE",
           -4: "TILEC_ERR_ARCH", -5: "TILEC_ERR_DRIVER", -6: "TILEC_ERR_NOTFOUND",
           -7: "TILEC_ERR_NOMEM", -8: "TILEC_ERR_IO", -9: "TILEC_ERR_CRASH",
           -10: "TILEC_ERR_DIFFER", -11: "TILEC_ERR_RUN"}


class TilecError(Exception):
    """A failure of libtilec (status: "TILEC_ERR_COMPILE", ...) or of an argument check
    (status "TILEC_ERR_ARG")."""

    def __init__(self, status, message):
        self.status = _STATUS.get(status, status) if isinstance(status, int) else status
        self.message = message
        super().__init__(message)


def _candidates():
    env = os.environ.get("TILEC_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libtilec.so")                       # installed with pip
    yield os.path.join(here, "..", "..", "build", "libtilec.so")  # in the source tree
    found = ctypes.util.find_library("tilec")
    if found:
        yield found
    yield "libtilec.so"


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append("%s: %s" % (path, e))
    raise ImportError("tilec: libtilec.so not found (build it with make, or set "
                      "TILEC_LIBRARY): " + "; ".join(errors))


_lib = _load()
c_p = ctypes.c_void_p
c_char_pp = ctypes.POINTER(ctypes.c_char_p)


class _Options(ctypes.Structure):
    # runtime/tilec.h: struct tilec_options
    _fields_ = [("target", ctypes.c_int), ("arch", ctypes.c_char_p), ("defines", c_char_pp),
                ("ndefines", ctypes.c_int), ("dump", ctypes.c_int), ("filename", ctypes.c_char_p),
                ("caret", ctypes.c_int), ("cost_model", ctypes.c_int), ("print_passes", ctypes.c_int),
                ("print_before", ctypes.c_char_p), ("print_after", ctypes.c_char_p),
                ("plugins", c_char_pp), ("nplugins", ctypes.c_int), ("pass_hook", c_p),
                ("pass_hook_user", c_p), ("layout_dump_to_output", ctypes.c_int), ("tma", ctypes.c_int),
                ("warp_specialize", ctypes.c_int), ("raster_group", ctypes.c_int),
                ("persistent", ctypes.c_int), ("epilogue", ctypes.c_int)]


_MAXD = 8


class _ParamInfo(ctypes.Structure):
    # runtime/tilec_program.h: tilec_param_info
    _fields_ = [("name", ctypes.c_char_p), ("is_tensor", ctypes.c_int), ("dtype", ctypes.c_char_p),
                ("elem_bytes", ctypes.c_int), ("ndim", ctypes.c_int),
                ("dim_size", ctypes.c_int * _MAXD), ("dim_const", ctypes.c_int64 * _MAXD),
                ("strided", ctypes.c_int), ("stride_size", ctypes.c_int * _MAXD),
                ("stride_const", ctypes.c_int64 * _MAXD)]


class _JitOptions(ctypes.Structure):
    # runtime/tilec_jit.h: tilec_jit_options
    _fields_ = [("cache_dir", ctypes.c_char_p), ("no_disk_cache", ctypes.c_int),
                ("mem_cache_bytes", ctypes.c_size_t), ("device", ctypes.c_int),
                ("hip_timeout_ms", ctypes.c_int), ("nvrtc_path", ctypes.c_char_p),
                ("libcuda_path", ctypes.c_char_p), ("hip_path", ctypes.c_char_p)]


class _JitStats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("compiles", "mem_hits", "disk_hits", "disk_writes",
                                               "disk_corrupt", "disk_errors", "mem_evictions",
                                               "tile_hits")]


class _Arg(ctypes.Structure):
    # runtime/tilec_jit.h: tilec_arg (int kind; a union of 8 bytes)
    _fields_ = [("kind", ctypes.c_int), ("raw", ctypes.c_uint64)]


def _fn(name, res, *args):
    f = getattr(_lib, name)
    f.restype = res
    f.argtypes = list(args)
    return f


_i, _u, _sz, _s, _i64 = ctypes.c_int, ctypes.c_uint, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int64
_pp = ctypes.POINTER(c_p)
_errp = ctypes.POINTER(c_p)
_version = _fn("tilec_version", _s)
_options_init = _fn("tilec_options_init", None, ctypes.POINTER(_Options))
_options_size = _fn("tilec_options_size", _sz)
if _options_size() != ctypes.sizeof(_Options):
    raise ImportError("tilec: this module's tilec_options (%d bytes) is not the library's (%d bytes): "
                      "rebuild the package against this libtilec" % (ctypes.sizeof(_Options), _options_size()))
_prog_compile = _fn("tilec_program_compile", _i, _s, _sz, ctypes.POINTER(_Options), _pp, _errp)
_prog_free = _fn("tilec_program_free", None, c_p)
_prog_code = _fn("tilec_program_code", _s, c_p)
_prog_layouts = _fn("tilec_program_layouts", _s, c_p)
_prog_target = _fn("tilec_program_target", _s, c_p)
_prog_arch = _fn("tilec_program_arch", _s, c_p)
_prog_nk = _fn("tilec_program_kernel_count", _i, c_p)
_prog_kname = _fn("tilec_program_kernel_name", _s, c_p, _i)
_prog_cname = _fn("tilec_program_kernel_cname", _s, c_p, _i)
_prog_klaunch = _fn("tilec_program_kernel_launch", _i, c_p, _i, ctypes.POINTER(_u),
                    ctypes.POINTER(_sz))
_prog_np = _fn("tilec_program_param_count", _i, c_p, _i)
_prog_param = _fn("tilec_program_param", _i, c_p, _i, _i, ctypes.POINTER(_ParamInfo))
_prog_ns = _fn("tilec_program_size_count", _i, c_p, _i)
_prog_sname = _fn("tilec_program_size_name", _s, c_p, _i, _i)
_prog_grid = _fn("tilec_program_grid", _i, c_p, _i, ctypes.POINTER(_i64),
                 ctypes.POINTER(ctypes.c_double), _u * 3, _errp)
_cpu_launch = _fn("tilec_cpu_launch", _i, c_p, _i, _pp, ctypes.POINTER(_i64), _s, _i, _errp)
_jit_create = _fn("tilec_jit_create", _i, _pp, ctypes.POINTER(_JitOptions), _errp)
_jit_destroy = _fn("tilec_jit_destroy", None, c_p)
_jit_stats = _fn("tilec_jit_stats_get", _i, c_p, ctypes.POINTER(_JitStats))
_jit_cache_dir = _fn("tilec_jit_cache_dir", _s, c_p)
_jit_tile = _fn("tilec_jit_compile_tile", _i, c_p, _s, _sz, ctypes.POINTER(_Options), _s, _pp, _errp)
_mod_free = _fn("tilec_module_free", None, c_p)
_mod_log = _fn("tilec_module_log", _s, c_p)
_mod_load = _fn("tilec_module_load", _i, c_p, _errp)
_launch = _fn("tilec_launch", _i, c_p, _s, _u * 3, _u * 3, _u, c_p, ctypes.POINTER(_Arg), _i, _errp)
_libc = ctypes.CDLL(None)
_free = _libc.free
_free.argtypes = [c_p]
_free.restype = None


def _take(errp):
    """The malloc'd message in errp (freed), or ""."""
    if not errp.value:
        return ""
    msg = ctypes.string_at(errp.value).decode("utf-8", "replace")
    _free(errp.value)
    errp.value = None
    return msg


def library():
    """The path libtilec.so was loaded from."""
    return _lib._name


def version():
    return _version().decode()


# ---- dtypes ---------------------------------------------------------------------------

# the array-interface typestrs (little-endian) that hold each tile dtype; bf16 and fp8 have
# no NumPy type, so their raw bits in uint16 / uint8 arrays are accepted as well
_TYPESTR = {"f16": ("<f2",), "f32": ("<f4",), "f64": ("<f8",), "i8": ("|i1", "<i1"),
            "u8": ("|u1", "<u1"), "i32": ("<i4",), "int": ("<i8",), "bool": ("|b1", "<b1"),
            "bf16": ("<u2", "bf16"), "fp8_e4m3": ("|u1", "<u1", "fp8_e4m3"),
            "fp8_e5m2": ("|u1", "<u1", "fp8_e5m2")}
# DLPack (code, bits) -> a typestr of the table above
_DLTYPE = {(2, 16): "<f2", (2, 32): "<f4", (2, 64): "<f8", (0, 8): "|i1", (1, 8): "|u1",
           (0, 32): "<i4", (0, 64): "<i8", (6, 8): "|b1", (1, 1): "|b1", (4, 16): "bf16",
           (1, 16): "<u2"}
_kDLCPU, _kDLCUDA, _kDLCUDAHost, _kDLCUDAManaged = 1, 2, 3, 13


def _scalar_bytes(dtype, value):
    if dtype == "f32":
        return struct.pack("<f", float(value))
    if dtype == "f64":
        return struct.pack("<d", float(value))
    if dtype == "f16":
        return struct.pack("<e", float(value))
    if dtype == "bf16":
        u = struct.unpack("<I", struct.pack("<f", float(value)))[0]
        u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16  # round to nearest even
        return struct.pack("<H", u & 0xFFFF)
    if dtype == "i32":
        return struct.pack("<i", int(value))
    if dtype == "int":
        return struct.pack("<q", int(value))
    if dtype == "i8":
        return struct.pack("<b", int(value))
    if dtype in ("u8", "bool"):
        return struct.pack("<B", int(value))
    raise TilecError(-1, "scalars of type %s cannot be passed from Python" % dtype)


# ---- tensors: the array interfaces and DLPack -------------------------------------------

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", c_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _View:
    """What a launch needs of one tensor: its address, shape, strides (in elements),
    typestr, the device ("cpu" or "cuda") and whether it may be written."""

    def __init__(self, ptr, shape, strides, typestr, device, writable, keep):
        self.ptr, self.shape, self.strides = ptr, tuple(shape), strides
        self.typestr, self.device, self.writable, self.keep = typestr, device, writable, keep


def _from_interface(obj, ai, device):
    shape = tuple(int(s) for s in ai["shape"])
    typestr = ai["typestr"]
    if typestr[0] == "=":
        typestr = "<" + typestr[1:]
    itemsize = int(typestr[2:]) if typestr[2:].isdigit() else 1
    ptr, readonly = ai["data"]
    strides = ai.get("strides")
    if strides is not None:
        if any(s % itemsize for s in strides):
            raise TilecError(-1, "strides %s are not whole elements" % (tuple(strides),))
        strides = tuple(int(s) // itemsize for s in strides)
    return _View(ptr or 0, shape, strides, typestr, device, not readonly, obj)


def _pycapsule_pointer(capsule, name):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = c_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return get(capsule, name)


def _from_dlpack(obj):
    try:
        capsule = obj.__dlpack__()
    except TypeError:
        capsule = obj.__dlpack__(stream=None)
    ptr = _pycapsule_pointer(capsule, b"dltensor")
    # DLManagedTensor starts with its DLTensor
    t = _DLTensor.from_address(ptr)
    if t.dtype.lanes != 1:
        raise TilecError(-1, "DLPack tensors with %d lanes are not supported" % t.dtype.lanes)
    typestr = _DLTYPE.get((t.dtype.code, t.dtype.bits))
    if typestr is None:
        raise TilecError(-1, "DLPack dtype (code %d, %d bits) is not a tile dtype"
                         % (t.dtype.code, t.dtype.bits))
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
    dev = t.device.device_type
    device = ("cpu" if dev in (_kDLCPU, _kDLCUDAHost) else
              "cuda" if dev in (_kDLCUDA, _kDLCUDAManaged) else "device type %d" % dev)
    data = (t.data or 0) + t.byte_offset
    # the capsule keeps the producer's memory alive while the view is held (it is not
    # consumed: its destructor releases the tensor as usual)
    return _View(data, shape, strides, typestr, device, True, (obj, capsule))


def _view(obj, want_device):
    """The tensor behind obj: __cuda_array_interface__ (PyTorch CUDA tensors, CuPy,
    Numba), the NumPy array interface, or DLPack."""
    if want_device == "cuda":
        try:
            ai = obj.__cuda_array_interface__
        except (AttributeError, TypeError, RuntimeError):
            ai = None
        if ai is not None:
            return _from_interface(obj, ai, "cuda")
    else:
        ai = getattr(obj, "__array_interface__", None)
        if ai is not None:
            return _from_interface(obj, ai, "cpu")
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj)
    if want_device != "cuda" and hasattr(obj, "__cuda_array_interface__"):
        return _from_interface(obj, obj.__cuda_array_interface__, "cuda")
    raise TilecError(-1, "%s is not a tensor (no __cuda_array_interface__, __array_interface__ "
                     "or __dlpack__)" % type(obj).__name__)


# ---- programs and kernels -------------------------------------------------------------

class Param:
    """A kernel parameter: name, is_tensor, dtype ("f16", ...), shape (a tuple of size
    names and ints; () for scalars), strides (a tuple of stride names and ints, in
    elements, for a tensor with strides(...); None: dense row-major)."""

    def __init__(self, name, is_tensor, dtype, shape, dim_size, strides=None, stride_size=None):
        self.name, self.is_tensor, self.dtype, self.shape = name, is_tensor, dtype, shape
        self.strides = strides
        self._dim_size = dim_size
        self._stride_size = stride_size

    def __repr__(self):
        if self.is_tensor:
            st = "" if self.strides is None else " strides(%s)" % ", ".join(str(s) for s in self.strides)
            return "%s: %s[%s]%s" % (self.name, self.dtype, ", ".join(str(s) for s in self.shape), st)
        return "%s: %s" % (self.name, self.dtype)


def _options(target, arch, defines, filename):
    o = _Options()
    _options_init(ctypes.byref(o))
    if target not in (None, "cuda", "hip"):
        raise TilecError(-1, "target must be 'cuda' or 'hip', not %r" % (target,))
    o.target = 1 if target == "hip" else 0
    keep = []
    if arch:
        o.arch = arch.encode()
    if defines:
        items = defines.items() if isinstance(defines, dict) else defines
        defs = []
        for d in items:
            defs.append(("%s=%s" % d if isinstance(d, tuple) else str(d)).encode())
        arr = (ctypes.c_char_p * len(defs))(*defs)
        keep.append(arr)
        o.defines = ctypes.cast(arr, c_char_pp)
        o.ndefines = len(defs)
    if filename:
        o.filename = filename.encode()
    return o, keep


class Program:
    """A compiled tile program: .code (CUDA C or HIP C), .layouts, .kernels (name ->
    Kernel); program["name"] is a kernel."""

    def __init__(self, source, target=None, arch=None, defines=None, filename=None):
        if isinstance(source, str):
            source = source.encode()
        self.source = source
        self._opts = (target, arch, dict(defines) if isinstance(defines, dict) else defines,
                      filename)
        o, keep = _options(target, arch, defines, filename)
        p, err = c_p(), c_p()
        st = _prog_compile(source, len(source), ctypes.byref(o), ctypes.byref(p), ctypes.byref(err))
        msg = _take(err)
        if st != 0:
            raise TilecError(st, msg)
        self._p = p
        self.code = _prog_code(p).decode()
        self.layouts = _prog_layouts(p).decode()
        self.target = _prog_target(p).decode()
        self.arch = _prog_arch(p).decode()
        self.kernels = {}
        for k in range(_prog_nk(p)):
            kern = Kernel(self, k)
            self.kernels[kern.name] = kern

    def __getitem__(self, name):
        try:
            return self.kernels[name]
        except KeyError:
            raise TilecError(-6, "no kernel %r in the program (kernels: %s)"
                             % (name, ", ".join(self.kernels))) from None

    def __del__(self):
        p = getattr(self, "_p", None)
        if p:
            _prog_free(p)
            self._p = None


class Kernel:
    """One kernel of a Program: .name, .params, .sizes, .threads, .smem_bytes;
    grid(**sizes), run_cpu(*tensors), launch(*tensors) (GPU)."""

    def __init__(self, prog, k):
        self._prog, self._k = prog, k
        p = prog._p
        self.name = _prog_kname(p, k).decode()
        self.cname = _prog_cname(p, k).decode()
        t, s = _u(), _sz()
        _prog_klaunch(p, k, ctypes.byref(t), ctypes.byref(s))
        self.threads, self.smem_bytes = t.value, s.value
        self.sizes = [_prog_sname(p, k, i).decode() for i in range(_prog_ns(p, k))]
        self.params = []
        for i in range(_prog_np(p, k)):
            pi = _ParamInfo()
            st = _prog_param(p, k, i, ctypes.byref(pi))
            if st != 0:
                raise TilecError(st, "kernel %s: parameter %d has too many dimensions" % (self.name, i))
            shape = tuple(self.sizes[pi.dim_size[d]] if pi.dim_size[d] >= 0 else pi.dim_const[d]
                          for d in range(pi.ndim))
            strides = stride_size = None
            if pi.strided:
                stride_size = [pi.stride_size[d] for d in range(pi.ndim)]
                strides = tuple(self.sizes[j] if j >= 0 else pi.stride_const[d]
                                for d, j in enumerate(stride_size))
            self.params.append(Param(pi.name.decode(), bool(pi.is_tensor), pi.dtype.decode(), shape,
                                     [pi.dim_size[d] for d in range(pi.ndim)], strides, stride_size))

    def __repr__(self):
        return "kernel %s(%s)" % (self.name, ", ".join(repr(p) for p in self.params))

    # -- arguments: the views checked against the parameters, the sizes from the shapes
    def _bind(self, args, kwargs, device):
        params = self.params
        sizes_kw = {k: kwargs.pop(k) for k in list(kwargs) if k in self.sizes}
        if len(args) > len(params):
            raise TilecError(-1, "%s takes %d arguments, %d given" % (self.name, len(params), len(args)))
        vals = list(args) + [None] * (len(params) - len(args))
        for k, v in kwargs.items():
            idx = [i for i, p in enumerate(params) if p.name == k]
            if not idx:
                raise TilecError(-1, "%s has no parameter or size %r" % (self.name, k))
            if vals[idx[0]] is not None:
                raise TilecError(-1, "%s: %s given twice" % (self.name, k))
            vals[idx[0]] = v
        sizes = [None] * len(self.sizes)
        origin = [None] * len(self.sizes)
        unset = []   # stride symbols of extent-1 dims: any positive value
        views, scalars = [None] * len(params), [None] * len(params)
        for i, (p, v) in enumerate(zip(params, vals)):
            if v is None:
                raise TilecError(-1, "%s: no value for %s" % (self.name, p.name))
            if not p.is_tensor:
                scalars[i] = v
                continue
            w = _view(v, device)
            if w.device != device:
                raise TilecError(-1, "%s: tensor %s is on %s, the launch needs %s memory"
                                 % (self.name, p.name, w.device, device))
            if w.typestr not in _TYPESTR[p.dtype]:
                raise TilecError(-1, "%s: tensor %s has dtype %s, the kernel takes %s"
                                 % (self.name, p.name, w.typestr, p.dtype))
            if len(w.shape) != len(p.shape):
                raise TilecError(-1, "%s: tensor %s has %d dimensions, the kernel takes %s (%d)"
                                 % (self.name, p.name, len(w.shape), p, len(p.shape)))
            for d, (got, want) in enumerate(zip(w.shape, p.shape)):
                j = p._dim_size[d]
                if j < 0:
                    if got != want:
                        raise TilecError(-1, "%s: tensor %s has extent %d in dimension %d, the "
                                         "kernel takes %s" % (self.name, p.name, got, d, p))
                elif sizes[j] is None:
                    sizes[j], origin[j] = got, "%s.shape[%d]" % (p.name, d)
                elif sizes[j] != got:
                    raise TilecError(-1, "%s: %s = %d from %s, but %s.shape[%d] is %d"
                                     % (self.name, self.sizes[j], sizes[j], origin[j], p.name, d, got))
            want, acc = [], 1
            for ext in reversed(w.shape):
                want.append(acc)
                acc *= ext
            want.reverse()
            if p.strides is not None:
                # a strided parameter: its stride symbols from the view's strides (elements),
                # its constant strides checked; a dim of extent <= 1 is never stepped over
                got_st = w.strides if w.strides is not None else tuple(want)
                for d, got in enumerate(got_st):
                    j = p._stride_size[d]
                    if w.shape[d] <= 1:
                        if j >= 0:
                            unset.append(j)
                        continue
                    if got < 1:
                        raise TilecError(-1, "%s: tensor %s has stride %d in dimension %d; the "
                                         "kernel's strides must be positive" % (self.name, p.name, got, d))
                    if j < 0:
                        if got != p.strides[d]:
                            raise TilecError(-1, "%s: tensor %s has stride %d in dimension %d, the "
                                             "kernel takes %s" % (self.name, p.name, got, d, p))
                    elif sizes[j] is None:
                        sizes[j], origin[j] = got, "%s.strides[%d]" % (p.name, d)
                    elif sizes[j] != got:
                        raise TilecError(-1, "%s: %s = %d from %s, but the stride of %s in dimension "
                                         "%d is %d" % (self.name, self.sizes[j], sizes[j], origin[j],
                                                       p.name, d, got))
            elif w.strides is not None:
                for d, (got, exp) in enumerate(zip(w.strides, want)):
                    if w.shape[d] > 1 and got != exp:
                        raise TilecError(-1, "%s: tensor %s has strides %s (elements), the kernel "
                                         "takes a dense row-major tensor (strides %s); pass a "
                                         "contiguous copy" % (self.name, p.name, w.strides, tuple(want)))
            if not w.writable:
                raise TilecError(-1, "%s: tensor %s is read-only" % (self.name, p.name))
            views[i] = w
        for j in unset:
            if sizes[j] is None and self.sizes[j] not in sizes_kw:
                sizes[j], origin[j] = 1, "a stride over one element"
        for j, name in enumerate(self.sizes):
            if name in sizes_kw:
                if sizes[j] is not None and sizes[j] != sizes_kw[name]:
                    raise TilecError(-1, "%s: %s = %d given, but %s is %d"
                                     % (self.name, name, sizes_kw[name], origin[j], sizes[j]))
                sizes[j] = int(sizes_kw[name])
            if sizes[j] is None:
                raise TilecError(-1, "%s: size %s is not the extent of any tensor; pass %s=..."
                                 % (self.name, name, name))
            if not -2**31 <= sizes[j] < 2**31:
                raise TilecError(-1, "%s: %s = %d (from %s) does not fit the kernel's int"
                                 % (self.name, name, sizes[j], origin[j] or "the arguments"))
        return views, scalars, sizes

    def _grid(self, sizes, scalars):
        n = len(self.params)
        sz = (ctypes.c_int64 * max(1, len(sizes)))(*sizes)
        sc = (ctypes.c_double * max(1, n))(*[float(s) if s is not None else 0.0 for s in scalars])
        grid, err = (_u * 3)(), c_p()
        st = _prog_grid(self._prog._p, self._k, sz, sc, grid, ctypes.byref(err))
        msg = _take(err)
        if st != 0:
            raise TilecError(st, msg)
        return tuple(grid), sz

    def grid(self, **sizes):
        """The launch grid for the given sizes (and scalars); checks the assumes."""
        missing = [s for s in self.sizes if s not in sizes]
        if missing:
            raise TilecError(-1, "%s: no value for %s" % (self.name, ", ".join(missing)))
        scalars = [None if p.is_tensor else sizes.get(p.name, 0) for p in self.params]
        return self._grid([int(sizes[s]) for s in self.sizes], scalars)[0]

    def run_cpu(self, *args, cxx=None, timeout=0, **kwargs):
        """Run the emitted code on the CPU target with NumPy arrays (or any object with the
        array interface or a CPU DLPack tensor); the arrays are updated in place. The C++
        build is made once per kernel and program."""
        views, scalars, sizes = self._bind(args, dict(kwargs), "cpu")
        _, sz = self._grid(sizes, scalars)
        n = len(self.params)
        argv = (c_p * max(1, n))()
        keep = []
        for i, p in enumerate(self.params):
            if p.is_tensor:
                argv[i] = views[i].ptr
            else:
                b = ctypes.create_string_buffer(_scalar_bytes(p.dtype, scalars[i]), 8)
                keep.append(b)
                argv[i] = ctypes.addressof(b)
        err = c_p()
        st = _cpu_launch(self._prog._p, self._k, argv, sz, cxx.encode() if cxx else None,
                         int(timeout), ctypes.byref(err))
        msg = _take(err)
        if st != 0:
            raise TilecError(st, msg)

    def launch(self, *args, jit=None, stream=None, **kwargs):
        """Launch on the GPU with CUDA tensors (__cuda_array_interface__ or DLPack): the tile
        source through NVRTC with the jit's memory and disk caches (Jit(); a default one
        when jit is None), then the driver. stream: a CUstream handle (int) or None."""
        jit = jit or Jit.default()
        views, scalars, sizes = self._bind(args, dict(kwargs), "cuda")
        grid, _ = self._grid(sizes, scalars)
        mod = jit._module(self._prog)
        cargs = (_Arg * (len(self.params) + len(sizes)))()
        n = 0
        for i, p in enumerate(self.params):
            if p.is_tensor:
                cargs[n].kind, cargs[n].raw = 1, views[i].ptr
            else:
                b = _scalar_bytes(p.dtype, scalars[i])
                kind = {"i32": 2, "int": 3, "f32": 4, "f16": 5}.get(p.dtype)
                if kind is None:
                    raise TilecError(-1, "%s: scalar %s of type %s cannot be passed to a GPU "
                                     "launch" % (self.name, p.name, p.dtype))
                cargs[n].kind, cargs[n].raw = kind, int.from_bytes(b.ljust(8, b"\0"), "little")
            n += 1
        for s in sizes:
            cargs[n].kind, cargs[n].raw = 2, s & 0xFFFFFFFF
            n += 1
        block = (_u * 3)(self.threads, 1, 1)
        err = c_p()
        st = _launch(mod, self.cname.encode(), (_u * 3)(*grid), block, self.smem_bytes,
                     c_p(stream) if stream else None, cargs, n, ctypes.byref(err))
        msg = _take(err)
        if st != 0:
            raise TilecError(st, msg)


class Jit:
    """The JIT runtime of tilec_jit.h: NVRTC compiles with the memory cache and the disk
    cache (cache_dir, default $TILEC_CACHE_DIR or ~/.cache/tilec), modules loaded on the
    device."""

    _default = None

    def __init__(self, cache_dir=None, no_disk_cache=False, device=0):
        o = _JitOptions()
        self._cache_dir = cache_dir.encode() if cache_dir else None
        o.cache_dir = self._cache_dir
        o.no_disk_cache = int(bool(no_disk_cache))
        o.device = device
        j, err = c_p(), c_p()
        st = _jit_create(ctypes.byref(j), ctypes.byref(o), ctypes.byref(err))
        msg = _take(err)
        if st != 0:
            raise TilecError(st, msg)
        self._j = j
        self._mods = {}

    @classmethod
    def default(cls):
        if cls._default is None:
            cls._default = cls()
        return cls._default

    @property
    def cache_dir(self):
        d = _jit_cache_dir(self._j)
        return d.decode() if d else None

    def stats(self):
        st = _JitStats()
        _jit_stats(self._j, ctypes.byref(st))
        return {n: getattr(st, n) for n, _ in _JitStats._fields_}

    def _module(self, prog):
        key = id(prog)
        if key in self._mods and self._mods[key][0] is prog:
            return self._mods[key][1]
        target, arch, defines, filename = prog._opts
        if target == "hip":
            raise TilecError(-1, "GPU launches from Python take the cuda target")
        o, keep = _options(target, arch, defines, filename)
        m, err = c_p(), c_p()
        st = _jit_tile(self._j, prog.source, len(prog.source), ctypes.byref(o), arch.encode()
                       if arch else None, ctypes.byref(m), ctypes.byref(err))
        msg = _take(err)
        if st != 0:
            log = _mod_log(m).decode() if m else ""
            if m:
                _mod_free(m)
            raise TilecError(st, (msg + "\n" + log).strip())
        st = _mod_load(m, ctypes.byref(err))
        msg = _take(err)
        if st != 0:
            _mod_free(m)
            raise TilecError(st, msg)
        self._mods[key] = (prog, m)
        return m

    def __del__(self):
        for _, m in getattr(self, "_mods", {}).values():
            _mod_free(m)
        if getattr(self, "_j", None):
            _jit_destroy(self._j)
            self._j = None


# compiled programs by (source, options): compiling the same source again returns the
# same Program, whose CPU builds and GPU modules are kept (the memory cache of Python)
_memo = {}


def compile(source, defines=None, target=None, arch=None, filename=None):
    """Compile tile source text (str or bytes) with -D values (a dict or "NAME=VALUE"
    strings); returns a Program. Raises TilecError with the "file:line:col: error: ..."
    diagnostics."""
    key = (source if isinstance(source, bytes) else source.encode(),
           tuple(sorted(defines.items())) if isinstance(defines, dict) else
           tuple(defines or ()), target, arch, filename)
    prog = _memo.get(key)
    if prog is None:
        prog = Program(source, target=target, arch=arch, defines=defines, filename=filename)
        _memo[key] = prog
    return prog


def compile_file(path, defines=None, target=None, arch=None):
    """Compile a .tile file (diagnostics name the file)."""
    try:
        with open(path, "rb") as f:
            src = f.read()
    except OSError as e:
        raise TilecError(-8, "tilec: error: cannot read %s: %s" % (path, e.strerror)) from None
    return compile(src, defines=defines, target=target, arch=arch, filename=str(path))

"""gdsl types on the Python side: parse the type strings of the program table
(runner/gpuc_program.h), turn Python/NumPy arguments into the flat list of
COMPONENTS an entry takes, and build Python results back from components.

A type is one of
    Scalar(kind)                 "f32"
    Array(elem, dims)            "f32[n]", "f64[n][m]", "Point { x: f32 }[n]"
    Tuple(items)                 "(f32, i64)"
    Struct(name, fields)         "Point { x: f32, y: f32 }"
Flattening follows gpuc_program.h: the leaves of the type depth first, an
array of tuples or structs split into one array per leaf (struct of arrays).
"""

import numpy as np

# grep "ORDER KIND": the order of GpucKind in runner/gpuc_program.h.
KINDS = ("bool", "i32", "i64", "u32", "u64", "f32", "f64")
DTYPES = {
    "bool": np.dtype(np.bool_), "i32": np.dtype(np.int32), "i64": np.dtype(np.int64),
    "u32": np.dtype(np.uint32), "u64": np.dtype(np.uint64),
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
}


class Scalar:
    def __init__(self, kind):
        self.kind = kind

    def __str__(self):
        return self.kind


class Array:
    def __init__(self, elem, dims):
        self.elem = elem    # Scalar, Tuple or Struct
        self.dims = dims    # list of str: a size name, a decimal constant, or "_"

    def __str__(self):
        inner = str(self.elem)
        if isinstance(self.elem, Struct):
            inner = self.elem.name
        return inner + "".join("[%s]" % d for d in self.dims)


class Tuple:
    def __init__(self, items):
        self.items = items

    def __str__(self):
        return "(" + ", ".join(str(t) for t in self.items) + ")"


class Struct:
    def __init__(self, name, fields):
        self.name = name
        self.fields = fields    # list of (name, type)

    def __str__(self):
        return self.name


class _Parser:
    """type = base dims ; base = KIND | "(" type {"," type} ")" | NAME "{" NAME ":" type {"," ...} "}" ;
    dims = {"[" (NAME | INT | "_") "]"}"""

    def __init__(self, text):
        self.text = text
        self.pos = 0

    def fail(self, what):
        raise ValueError("gpuc: cannot read type %r at %d: expected %s" % (self.text, self.pos, what))

    def skip(self):
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def peek(self):
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def eat(self, ch):
        if self.peek() != ch:
            self.fail(repr(ch))
        self.pos += 1

    def word(self):
        self.skip()
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] == "_"):
            self.pos += 1
        if start == self.pos:
            self.fail("a name")
        return self.text[start:self.pos]

    def type(self):
        if self.peek() == "(":
            self.pos += 1
            items = [self.type()]
            while self.peek() == ",":
                self.pos += 1
                items.append(self.type())
            self.eat(")")
            base = Tuple(items)
        else:
            name = self.word()
            if name in KINDS:
                base = Scalar(name)
            else:
                self.eat("{")
                fields = []
                while True:
                    fname = self.word()
                    self.eat(":")
                    fields.append((fname, self.type()))
                    if self.peek() != ",":
                        break
                    self.pos += 1
                self.eat("}")
                base = Struct(name, fields)
        dims = []
        while self.peek() == "[":
            self.pos += 1
            dims.append(self.word())
            self.eat("]")
        return Array(base, dims) if dims else base


def parse_type(text):
    p = _Parser(text)
    t = p.type()
    if p.peek():
        p.fail("the end")
    return t


def leaves(t, dims=()):
    """(path suffix, kind, dims) for each component of type t, depth first."""
    if isinstance(t, Scalar):
        return [("", t.kind, tuple(dims))]
    if isinstance(t, Array):
        return leaves(t.elem, tuple(t.dims))
    out = []
    parts = enumerate(t.items) if isinstance(t, Tuple) else t.fields
    for key, sub in parts:
        for suffix, kind, d in leaves(sub, dims):
            out.append(("." + str(key) + suffix, kind, d))
    return out


def numpy_dtype(t):
    """The NumPy dtype of one element of type t (structured for tuples and structs)."""
    if isinstance(t, Scalar):
        return DTYPES[t.kind]
    if isinstance(t, Tuple):
        return np.dtype([("f%d" % i, numpy_dtype(s)) for i, s in enumerate(t.items)])
    return np.dtype([(name, numpy_dtype(s)) for name, s in t.fields])


# ---- arguments -------------------------------------------------------------

class Sizes:
    """The size variables bound so far by the arguments of one call."""

    def __init__(self, entry, device_view=None):
        self.entry = entry
        self.values = {}    # name -> (value, which argument gave it)
        self.device_view = device_view   # the CUDA backend's: device array -> DeviceArray

    def bind(self, name, value, what):
        if name == "_":
            return
        if name.isdigit():
            if int(name) != value:
                raise ValueError("%s: %s has size %d where the type says %s" % (self.entry, what, value, name))
            return
        old = self.values.get(name)
        if old is None:
            self.values[name] = (value, what)
        elif old[0] != value:
            raise ValueError("%s: size mismatch: %s has %s = %d but %s gave %s = %d"
                             % (self.entry, what, name, value, old[1], name, old[0]))

    def get(self, name):
        if name.isdigit():
            return int(name)
        v = self.values.get(name)
        return None if v is None else v[0]


def _scalar_value(kind, value, what, entry):
    """A Python or NumPy scalar as a 0-d array of kind, checked (no silent narrowing)."""
    dt = DTYPES[kind]
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.generic):
        if value.dtype != dt and not (value.dtype.kind in "iu" and dt.kind in "iuf") \
                and not (value.dtype.kind == "f" and dt.kind == "f"):
            raise TypeError("%s: %s must be %s, got numpy.%s" % (entry, what, kind, value.dtype))
        value = value.item()
    if kind == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError("%s: %s must be bool, got %s" % (entry, what, type(value).__name__))
    elif dt.kind in "iu":
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError("%s: %s must be an integer (%s), got %s" % (entry, what, kind, type(value).__name__))
        info = np.iinfo(dt)
        if not info.min <= value <= info.max:
            raise OverflowError("%s: %s = %d does not fit in %s" % (entry, what, value, kind))
    else:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError("%s: %s must be a number (%s), got %s" % (entry, what, kind, type(value).__name__))
    return np.array(value, dtype=dt)


def _array_value(kind, dims, value, what, entry, sizes):
    """An ndarray of kind with len(dims) dimensions, C-contiguous (copied if it was not)."""
    dt = DTYPES[kind]
    if not isinstance(value, np.ndarray) and (hasattr(value, "__cuda_array_interface__")
                                              or hasattr(value, "__dlpack_device__")):
        view = sizes.device_view(value) if sizes.device_view else None
        if view is not None:
            return _device_value(kind, dims, value, view, what, entry, sizes)
        if hasattr(value, "__cuda_array_interface__") or (type(value).__module__ or "").startswith(("cupy", "torch")):
            if getattr(value, "is_cuda", True):
                raise TypeError("%s: %s is a device array (%s); the C backend takes NumPy arrays: compile with "
                                "backend='cuda', or copy it to the host" % (entry, what, type(value).__name__))
    if not isinstance(value, np.ndarray):
        if hasattr(value, "__array_interface__") or hasattr(value, "__array__"):
            value = np.asarray(value)
        else:
            raise TypeError("%s: %s must be a numpy array of %s with %d dimension%s (%s), got %s"
                            % (entry, what, dt.name, len(dims), "" if len(dims) == 1 else "s",
                               kind + "".join("[%s]" % d for d in dims), type(value).__name__))
    if value.dtype != dt:
        raise TypeError("%s: %s must have dtype %s (%s), got %s; convert it with .astype(numpy.%s)"
                        % (entry, what, dt.name, kind, value.dtype, dt.name))
    if value.ndim != len(dims):
        raise ValueError("%s: %s must have %d dimension%s (%s), got %d (shape %s)"
                         % (entry, what, len(dims), "" if len(dims) == 1 else "s",
                            kind + "".join("[%s]" % d for d in dims), value.ndim, value.shape))
    for i, d in enumerate(dims):
        sizes.bind(d, value.shape[i], "%s (dimension %d)" % (what, i))
    return np.ascontiguousarray(value)


def _device_value(kind, dims, value, view, what, entry, sizes):
    """A device array argument (a DeviceArray of gpuc/_cuda.py), checked as _array_value checks
    NumPy arrays; a non-contiguous one is copied by its framework where it has one."""
    dt = DTYPES[kind]
    if view.dtype != dt:
        raise TypeError("%s: %s must have dtype %s (%s), got %s; convert it with .astype(numpy.%s)"
                        % (entry, what, dt.name, kind, view.dtype_text, dt.name))
    if view.ndim != len(dims):
        raise ValueError("%s: %s must have %d dimension%s (%s), got %d (shape %s)"
                         % (entry, what, len(dims), "" if len(dims) == 1 else "s",
                            kind + "".join("[%s]" % d for d in dims), view.ndim, view.shape))
    for i, d in enumerate(dims):
        sizes.bind(d, view.shape[i], "%s (dimension %d)" % (what, i))
    if not view.contiguous:
        from . import _cuda
        copy = _cuda.contiguous(view, value)
        if copy is None:
            raise ValueError("%s: %s is a non-contiguous device array; pass a C-contiguous one" % (entry, what))
        view = sizes.device_view(copy)
    return view


def _split(t, value, what, entry):
    """The parts of a tuple or struct value (or an array of them): list of (key, type, value)."""
    keys = list(range(len(t.items))) if isinstance(t, Tuple) else [name for name, _ in t.fields]
    types = t.items if isinstance(t, Tuple) else [s for _, s in t.fields]
    if isinstance(value, (np.ndarray, np.void)) and value.dtype.names:
        names = value.dtype.names
        if len(names) != len(keys) or (isinstance(t, Struct) and set(names) != set(keys)):
            raise TypeError("%s: %s must have the fields %s, got a structured array with %s"
                            % (entry, what, ", ".join(map(str, keys)), ", ".join(names)))
        parts = [value[names[k] if isinstance(k, int) else k] for k in keys]
    elif isinstance(t, Struct) and isinstance(value, dict):
        missing = [k for k in keys if k not in value]
        extra = [k for k in value if k not in keys]
        if missing or extra:
            raise TypeError("%s: %s must be a dict with the fields %s of %s%s%s"
                            % (entry, what, ", ".join(keys), t.name,
                               "; missing " + ", ".join(missing) if missing else "",
                               "; unknown " + ", ".join(map(str, extra)) if extra else ""))
        parts = [value[k] for k in keys]
    elif isinstance(t, Tuple) and isinstance(value, (tuple, list)):
        if len(value) != len(keys):
            raise TypeError("%s: %s must be a tuple of %d, got %d" % (entry, what, len(keys), len(value)))
        parts = list(value)
    else:
        want = "a dict of its fields or a NumPy structured array" if isinstance(t, Struct) \
            else "a tuple or a NumPy structured array"
        raise TypeError("%s: %s (%s) must be %s, got %s" % (entry, what, t, want, type(value).__name__))
    return [(k, s, v) for k, s, v in zip(keys, types, parts)]


def _component(what, key):
    """The name of component `key` of argument `what`: "argument 'ps'" -> "argument 'ps.x'"."""
    return what[:-1] + ".%s'" % key if what.endswith("'") else "%s.%s" % (what, key)


def flatten(t, value, what, entry, sizes, out):
    """Append the components of value (of type t) to out as C-contiguous ndarrays."""
    if isinstance(t, Scalar):
        out.append(_scalar_value(t.kind, value, what, entry))
    elif isinstance(t, Array) and isinstance(t.elem, Scalar):
        out.append(_array_value(t.elem.kind, t.dims, value, what, entry, sizes))
    elif isinstance(t, Array):
        for key, sub, v in _split(t.elem, value, what, entry):
            flatten(Array(sub, t.dims) if not isinstance(sub, Array) else sub, v,
                    _component(what, key), entry, sizes, out)
    else:
        for key, sub, v in _split(t, value, what, entry):
            flatten(sub, v, _component(what, key), entry, sizes, out)


# ---- results ---------------------------------------------------------------

def unflatten(t, comps):
    """The Python value of type t from the component arrays comps (consumed from the front):
    scalars as Python numbers, arrays as ndarrays, tuples as tuples, structs as dicts,
    arrays of structs as structured ndarrays, arrays of tuples as tuples of arrays."""
    if isinstance(t, Scalar):
        return comps.pop(0)[()].item()
    if isinstance(t, Array) and isinstance(t.elem, Scalar):
        return comps.pop(0)
    if isinstance(t, Array) and isinstance(t.elem, Struct):
        n = len(leaves(t.elem))
        parts = comps[:n]
        del comps[:n]
        shape = parts[0].shape if parts else ()
        out = np.empty(shape, dtype=numpy_dtype(t.elem))
        _fill_struct(out, t.elem, list(parts))
        return out
    if isinstance(t, Array):
        return tuple(unflatten(Array(s, t.dims), comps) for s in t.elem.items)
    if isinstance(t, Tuple):
        return tuple(unflatten(s, comps) for s in t.items)
    return {name: unflatten(s, comps) for name, s in t.fields}


def _fill_struct(out, t, comps):
    for i, (name, s) in enumerate(t.fields if isinstance(t, Struct) else
                                  [("f%d" % i, s) for i, s in enumerate(t.items)]):
        if isinstance(s, Scalar):
            out[name] = comps.pop(0)
        else:
            _fill_struct(out[name], s, comps)

"""``retrograd.save`` / ``retrograd.load``: tensors and their containers, without pickle.

The file is a safetensors file (https://github.com/huggingface/safetensors), so
``safetensors.numpy.load_file`` reads our tensors and we read files it wrote:

    8 bytes    little-endian u64 N, the header's length
    N bytes    JSON header: {name: {"dtype": "F32", "shape": [2, 3], "data_offsets": [b, e]},
               ..., "__metadata__": {"format": "pt", "retrograd": <structure JSON>}}
    the rest   the tensors' raw little-endian bytes, one after another, row-major

The structure (dicts, lists, tuples, numbers, strings, None, OrderedDict...) lives as JSON in
the header's ``__metadata__``, each tensor replaced by its name.  Loading parses JSON and
copies bytes: it never runs code from the file, so ``weights_only`` is always in effect.

Not preserved: storage shared between different tensors (views come back as copies; the
*same* tensor object saved twice comes back as one object), gradients, hooks, and classes
beyond those listed in :func:`save`.
"""

from __future__ import annotations

import base64
import collections
import io
import json
import math
import os
import struct

import numpy as np

from . import dtypes
from .backend import device as _device
from .backend import to_numpy
from .tensor import Size, Tensor, make_tensor

__all__ = ["save", "load"]

_FORMAT_KEY = "retrograd"  # the structure's key in __metadata__
_MAX_HEADER = 100_000_000  # bytes; safetensors' own limit

# retrograd dtype name <-> safetensors dtype code
_CODES = {"float16": "F16", "float32": "F32", "float64": "F64", "int8": "I8", "int16": "I16",
          "int32": "I32", "int64": "I64", "uint8": "U8", "bool": "BOOL"}
_FROM_CODE = {code: dtypes.to_dtype(name) for name, code in _CODES.items()}


#: the container types stored as such (subclasses such as namedtuple or defaultdict are not:
#: rebuilding them would mean running their code)
_CONTAINERS = (list, tuple, dict, collections.OrderedDict, set, frozenset)


# ============================================================================ saving
class _Writer:
    """Walks the object, collecting arrays and building the structure's JSON value."""

    def __init__(self):
        self.entries = []  # (name, contiguous little-endian array)
        self.names = set()
        self.seen = {}  # id(tensor) -> name, so one tensor object is stored once
        self.keep = []  # the tensors behind ``seen``'s ids, alive until the file is written
        self.open = set()  # ids of the containers being encoded (a cycle would never end)

    def _name_for(self, path) -> str:
        base = ".".join(str(p) for p in path) or "tensor"
        name, k = base, 1
        while name in self.names or name == "__metadata__":
            k += 1
            name = f"{base}#{k}"
        self.names.add(name)
        return name

    def _array(self, array, path) -> str:
        arr = to_numpy(array)
        if not arr.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
            arr = arr.copy(order="C")
        if arr.dtype.name not in _CODES:
            raise TypeError(
                f"retrograd.save: array at {_where(path)} has dtype {arr.dtype}, which has no "
                f"safetensors code; convert it to one of {', '.join(_CODES)}")
        name = self._name_for(path)
        self.entries.append((name, arr.astype(arr.dtype.newbyteorder("<"), copy=False)))
        return name

    def encode(self, obj, path):
        # NumPy scalars first: np.float64 is also a Python float, np.bool_ is not a bool
        if isinstance(obj, np.generic) and obj.dtype.name in _CODES:
            return {"npscalar": self._array(np.asarray(obj), path)}
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if type(obj) in _CONTAINERS:  # exactly these: a namedtuple or Size is no plain tuple
            if id(obj) in self.open:
                raise ValueError(f"retrograd.save: obj contains itself at {_where(path)}; "
                                 "a saved structure must be a tree")
            self.open.add(id(obj))
            try:
                return self._container(obj, path)
            finally:
                self.open.discard(id(obj))
        return self._leaf(obj, path)

    def _leaf(self, obj, path):
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            return float(obj) if math.isfinite(obj) else {"float": repr(float(obj))}
        if isinstance(obj, Tensor):
            return self._tensor(obj, path)
        if isinstance(obj, dtypes.dtype):
            return {"dtype": obj.name}
        if isinstance(obj, _device):
            return {"device": str(obj)}
        if isinstance(obj, Size):
            return {"size": [int(s) for s in obj]}
        if isinstance(obj, complex):
            return {"complex": [self.encode(obj.real, path), self.encode(obj.imag, path)]}
        if isinstance(obj, bytes):
            return {"bytes": base64.b64encode(obj).decode("ascii")}
        if isinstance(obj, np.ndarray):
            return {"ndarray": self._array(obj, path)}
        raise self._refuse(obj, path)

    def _container(self, obj, path):
        if isinstance(obj, dict):
            tag = "dict" if type(obj) is dict else "odict"
            return {tag: [[self.encode(k, path + ("key",)), self.encode(v, path + (k,))]
                          for k, v in obj.items()]}
        if isinstance(obj, (list, tuple)):
            return {type(obj).__name__: [self.encode(v, path + (i,))
                                         for i, v in enumerate(obj)]}
        return {type(obj).__name__: [self.encode(v, path) for v in obj]}  # set, frozenset

    @staticmethod
    def _refuse(obj, path) -> TypeError:
        return TypeError(
            f"retrograd.save: cannot store {type(obj).__name__} at {_where(path)}: a file is "
            "loaded without running code, so it holds only tensors, NumPy arrays, numbers, "
            "strings, bytes, None, dtypes, devices and dicts/lists/tuples/sets of them "
            "(save a module's or optimizer's state_dict(), a namedtuple's _asdict())")

    def _tensor(self, t: Tensor, path):
        name = self.seen.get(id(t))
        if name is None:
            name = self._array(t._data, path)
            self.seen[id(t)] = name
            self.keep.append(t)
        node = {"tensor": name, "requires_grad": bool(t.requires_grad),
                "device": str(t.device)}
        if type(t).__name__ == "Parameter" and type(t).__module__.startswith("retrograd.nn"):
            node["parameter"] = True
        return node

    def header(self, structure) -> bytes:
        header, offset = {}, 0
        for name, arr in self.entries:
            header[name] = {"dtype": _CODES[arr.dtype.name], "shape": list(arr.shape),
                            "data_offsets": [offset, offset + arr.nbytes]}
            offset += arr.nbytes
        header["__metadata__"] = {"format": "pt",
                                  _FORMAT_KEY: json.dumps(structure, allow_nan=False,
                                                          separators=(",", ":"))}
        raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
        return raw + b" " * (-len(raw) % 8)  # pad with spaces: the data starts 8-aligned


def _where(path) -> str:
    return "the top level" if not path else "obj" + "".join(f"[{p!r}]" for p in path)


def save(obj, f, pickle_module=None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` (tensors, and dicts/lists/tuples/numbers/strings holding them, e.g. a
    ``state_dict()``) to ``f``, a path or a binary file object, as a safetensors file.

    ``pickle_module`` and the other keywords are accepted for PyTorch's signature and
    ignored: nothing is pickled.

    Examples
    --------
    >>> import io, retrograd as T
    >>> buf = io.BytesIO()
    >>> T.save({"w": T.ones(2), "step": 3}, buf)
    >>> _ = buf.seek(0)
    >>> T.load(buf)
    {'w': tensor([1., 1.]), 'step': 3}
    """
    writer = _Writer()
    structure = writer.encode(obj, ())
    header = writer.header(structure)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as out:
            _write(out, header, writer.entries)
    else:
        _write(f, header, writer.entries)


def _write(out, header: bytes, entries) -> None:
    out.write(struct.pack("<Q", len(header)))
    out.write(header)
    for _, arr in entries:
        if arr.nbytes:
            out.write(memoryview(arr.reshape(-1).view(np.uint8)))


# ============================================================================ loading
def _source_name(f) -> str:
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else f"the {type(f).__name__} object"


class _Reader:
    """Reads a stream of known ``size`` (bytes from its current position): the header first,
    then each tensor's bytes straight into its own array (one copy, no whole-file buffer)."""

    def __init__(self, stream, size: int, source: str):
        self.stream = stream
        self.size = size
        self.source = source

    def fail(self, what: str):
        raise RuntimeError(f"retrograd.load: {self.source} {what}")

    def header(self):
        size = self.size
        if size < 8:
            self.fail(f"is {size} bytes long, too short for the 8-byte header length: it "
                      "is truncated or not a file written by retrograd.save / safetensors")
        (n,) = struct.unpack("<Q", self.stream.read(8))
        if n > _MAX_HEADER:
            self.fail(f"claims a header of {n} bytes, over the {_MAX_HEADER}-byte limit: "
                      "not a retrograd.save / safetensors file, or a forged one")
        if n > size - 8:
            self.fail(f"claims a header of {n} bytes but holds only {size - 8} after the "
                      "length: the file is truncated, or not a retrograd.save / safetensors "
                      "file")
        try:
            header = json.loads(self.stream.read(n).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            self.fail(f"has a header that is not valid UTF-8 JSON ({e}): not a "
                      "retrograd.save / safetensors file, or corrupted")
        if not isinstance(header, dict):
            self.fail(f"has a JSON header that is a {type(header).__name__}, not an object")
        self.data_size = size - 8 - n
        return header

    def tensors(self, header) -> dict:
        """name -> NumPy array (its own, writable memory), after checking every entry."""
        size = self.data_size
        spans = []
        for name, info in header.items():
            if name == "__metadata__":
                continue
            dtype, shape, begin, end = self._entry(name, info, size)
            spans.append((begin, end, name, dtype, shape))
        spans.sort(key=lambda s: (s[0], s[1]))
        position, previous = 0, None
        for begin, end, name, _, _ in spans:
            if begin < position:
                self.fail(f"is malformed: tensor {name!r} (bytes {begin}..{end}) overlaps "
                          f"tensor {previous!r} (ending at byte {position}) in the data section")
            if begin > position:
                self.fail(f"is malformed: bytes {position}..{begin} of the data section "
                          f"belong to no tensor (before tensor {name!r})")
            position, previous = end, name
        if position != size:
            self.fail(f"is malformed: its tensors cover {position} bytes of data but the file "
                      f"holds {size} after the header (truncated, or extra bytes)")
        arrays = {}
        for begin, end, name, dtype, shape in spans:  # in file order: one sequential read
            arr = np.empty(tuple(shape), dtype=dtype.numpy.newbyteorder("<"))
            got = self.stream.readinto(memoryview(arr.reshape(-1).view(np.uint8)))
            if (got or 0) != end - begin:
                self.fail(f"ended inside tensor {name!r}: the file was cut while being read")
            arrays[name] = arr.astype(dtype.numpy, copy=False)  # native order (big-endian hosts)
        return {name: arrays[name] for name in header if name != "__metadata__"}

    def _entry(self, name, info, size):
        if not isinstance(info, dict):
            self.fail(f"is malformed: header entry {name!r} is not an object")
        code = info.get("dtype")
        if code not in _FROM_CODE:
            self.fail(f"has tensor {name!r} of dtype {code!r}, which retrograd cannot hold "
                      f"(it reads {', '.join(_FROM_CODE)})")
        shape = info.get("shape")
        if (not isinstance(shape, list) or not all(
                type(s) is int and s >= 0 for s in shape)):
            self.fail(f"is malformed: tensor {name!r} has shape {shape!r}; a list of "
                      "non-negative integers is needed")
        offsets = info.get("data_offsets")
        if (not isinstance(offsets, list) or len(offsets) != 2
                or not all(type(o) is int and o >= 0 for o in offsets)):
            self.fail(f"is malformed: tensor {name!r} has data_offsets {offsets!r}; two "
                      "non-negative integers [begin, end] are needed")
        begin, end = offsets
        dtype = _FROM_CODE[code]
        if end < begin:
            self.fail(f"is malformed: tensor {name!r} has data_offsets [{begin}, {end}], "
                      "ending before they begin")
        if end > size:
            self.fail(f"is truncated or forged: tensor {name!r} needs bytes {begin}..{end} "
                      f"of the data section, which holds {size} bytes")
        if end - begin != math.prod(shape) * dtype.itemsize:
            self.fail(f"is malformed: tensor {name!r} of shape {shape} and dtype {code} "
                      f"needs {math.prod(shape) * dtype.itemsize} bytes but its data_offsets "
                      f"[{begin}, {end}] span {end - begin}")
        return dtype, shape, begin, end


#: the structure's tags (the first key of each JSON object in it)
_TAGS = frozenset(("list", "tuple", "set", "frozenset", "dict", "odict", "float", "complex",
                   "bytes", "dtype", "device", "size", "ndarray", "npscalar", "tensor"))


class _Decoder:
    def __init__(self, arrays: dict, reader: _Reader, place):
        self.arrays = arrays
        self.reader = reader
        self.place = place  # (tensor, saved location) -> tensor on its destination
        self.tensors = {}  # name -> Tensor: the same object wherever one was saved twice

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, dict) and node:
            tag = next(iter(node))
            if tag in _TAGS:
                return getattr(self, f"_{tag}")(node[tag], node)
        self.reader.fail(f"has a structure entry retrograd does not know: {str(node)[:80]}")

    def _items(self, value):
        if not isinstance(value, list):
            self.reader.fail(f"is malformed: expected a list in the structure, got {value!r}")
        return value

    def _list(self, value, node):
        return [self.decode(v) for v in self._items(value)]

    def _tuple(self, value, node):
        return tuple(self.decode(v) for v in self._items(value))

    def _set(self, value, node):
        return {self.decode(v) for v in self._items(value)}

    def _frozenset(self, value, node):
        return frozenset(self.decode(v) for v in self._items(value))

    def _pairs(self, value):
        pairs = []
        for pair in self._items(value):
            if not isinstance(pair, list) or len(pair) != 2:
                self.reader.fail(f"is malformed: a dict entry {str(pair)[:80]} is not a "
                                 "[key, value] pair")
            pairs.append((self.decode(pair[0]), self.decode(pair[1])))
        return pairs

    def _dict(self, value, node):
        return dict(self._pairs(value))

    def _odict(self, value, node):
        return collections.OrderedDict(self._pairs(value))

    def _float(self, value, node):
        if value not in ("inf", "-inf", "nan"):
            self.reader.fail(f"is malformed: {value!r} is not a non-finite float")
        return float(value)

    def _complex(self, value, node):
        re, im = self._items(value)
        return complex(self.decode(re), self.decode(im))

    def _bytes(self, value, node):
        return base64.b64decode(value.encode("ascii"), validate=True)

    def _dtype(self, value, node):
        return dtypes.to_dtype(value)

    def _device(self, value, node):
        return _device(value)

    def _size(self, value, node):
        return Size(int(v) for v in self._items(value))

    def _array(self, name):
        if name not in self.arrays:
            self.reader.fail(f"is malformed: its structure names tensor {name!r}, which the "
                             "header does not hold")
        return self.arrays[name]

    def _ndarray(self, value, node):
        return self._array(value).copy()

    def _npscalar(self, value, node):
        return self._array(value)[()]

    def _tensor(self, value, node):
        if value in self.tensors:
            return self.tensors[value]
        t = make_tensor(self._array(value))
        t = self.place(t, node.get("device", "cpu"))
        if node.get("parameter"):
            from . import nn

            parameter = getattr(nn, "Parameter", None)
            if parameter is not None:
                t = parameter(t, requires_grad=bool(node.get("requires_grad")))
        elif node.get("requires_grad"):
            if not t.is_floating_point():
                self.reader.fail(f"is malformed: tensor {value!r} of dtype {t.dtype} is marked "
                                 "requires_grad, which only floating tensors can be")
            t.requires_grad_(True)
        self.tensors[value] = t
        return t


def _placer(map_location):
    """(tensor, saved location) -> the tensor on the device ``map_location`` asks for."""
    def move(t, location):
        location = str(location)
        if location.startswith("cuda"):
            from . import cuda

            if not cuda.is_available():
                raise RuntimeError(
                    "Attempting to deserialize object on a CUDA device but "
                    "retrograd.cuda.is_available() is False. If you are running on a CPU-only "
                    "machine, please use retrograd.load with map_location='cpu' to map your "
                    "tensors to the CPU.")
        return t if location == "cpu" else t.to(location)

    if map_location is None:
        return move
    if isinstance(map_location, (str, _device)):
        return lambda t, location: move(t, map_location)
    if isinstance(map_location, dict):
        return lambda t, location: move(t, map_location.get(location, location))
    if callable(map_location):
        def call(t, location):
            moved = map_location(t, location)
            return move(t, location) if moved is None else moved
        return call
    raise TypeError(
        f"retrograd.load: map_location must be None, a device, a string, a dict or a "
        f"callable, not {type(map_location).__name__}")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load what :func:`save` wrote to ``f`` (a path or a binary file object); a plain
    safetensors file loads as a dict of tensors.

    ``map_location`` moves tensors (a device or string, a dict from saved location to new
    one, or ``fn(tensor, location)``); ``weights_only``, ``mmap`` and ``pickle_module`` are
    accepted for PyTorch's signature: loading never runs code, whatever they say.
    """
    source = _source_name(f)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as stream:
            return _load(stream, source, map_location)
    return _load(f, source, map_location)


def _load(stream, source: str, map_location):
    if getattr(stream, "seekable", lambda: False)():
        here = stream.tell()
        size = stream.seek(0, os.SEEK_END) - here
        stream.seek(here)
    else:  # a pipe or socket: read it all to learn its size
        data = stream.read()
        stream, size = io.BytesIO(data), len(data)
    reader = _Reader(stream, size, source)
    header = reader.header()
    metadata = header.get("__metadata__", {})
    if not isinstance(metadata, dict):
        reader.fail("is malformed: __metadata__ is not an object")
    arrays = reader.tensors(header)
    place = _placer(map_location)
    decoder = _Decoder(arrays, reader, place)
    if _FORMAT_KEY not in metadata:  # a plain safetensors file: its tensors by name
        return {name: decoder._tensor(name, {}) for name in arrays}
    try:
        structure = json.loads(metadata[_FORMAT_KEY])
        return decoder.decode(structure)
    except RecursionError:
        reader.fail("holds a structure nested too deeply to load")
    except (ValueError, TypeError, AttributeError, KeyError) as e:
        reader.fail(f"has a malformed structure in its __metadata__ ({e})")

"""retrograd.save / retrograd.load: round trips, the safetensors layout (read and written by
the safetensors package), and clear errors for truncated, random and forged files."""

from __future__ import annotations

import collections
import io
import json
import math
import struct

import numpy as np
import pytest

import retrograd as T

DTYPES = [T.float16, T.float32, T.float64, T.int8, T.int16, T.int32, T.int64, T.uint8, T.bool]


def roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    T.save(obj, buf)
    buf.seek(0)
    return T.load(buf, **load_kwargs)


def assert_tensor_equal(a, b):
    assert isinstance(a, T.Tensor) and a.dtype == b.dtype and a.shape == b.shape
    assert a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _example(dtype, shape):
    values = np.arange(math.prod(shape)).reshape(shape) % 7 - 3
    return T.tensor(values.astype(dtype.numpy) if dtype != T.bool else values > 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 3), (2, 3, 4)])
def test_every_dtype_and_shape_round_trips(dtype, shape):
    t = _example(dtype, shape)
    back = roundtrip(t)
    assert_tensor_equal(back, t)
    back_np = back.numpy()
    assert back_np.flags.writeable and back_np.flags.owndata  # a copy, not the file's bytes


def test_non_contiguous_and_special_values_round_trip():
    base = T.arange(24.0).reshape(4, 6)
    views = {"t": base.t(), "step": base[:, ::2], "flip": base.flip(0), "expand":
             T.tensor([1.0, 2.0]).expand(3, 2)}
    back = roundtrip(views)
    for k, v in views.items():
        assert_tensor_equal(back[k], v.contiguous())
    special = T.tensor([math.inf, -math.inf, math.nan, -0.0, 5e-324], dtype=T.float64)
    got = roundtrip(special).numpy()
    np.testing.assert_array_equal(got, special.numpy())
    assert np.signbit(got[3])


def test_structures_round_trip():
    w = T.randn(3, 2, requires_grad=True)
    obj = {
        "weights": collections.OrderedDict(layer=w, bias=T.zeros(2)),
        "list": [1, -2, 2 ** 70, 0.5, math.inf, -math.inf, "s", None, True, False],
        "tuple": (1, (2.0, "x")), "empty": [(), {}, [], ""],
        "int_keys": {0: "a", -1: "b", 2.5: "c", (1, "t"): "d", None: "e", True: "f"},
        "misc": [b"\x00\xffbytes", 1 + 2j, {1, 2}, frozenset({"a"}), T.float16,
                 T.device("cpu"), T.Size([2, 3]), np.arange(3.0), np.float32(1.5),
                 np.int64(-4), np.float64(0.25), np.bool_(True)],
        "unicode é ✓": "値",
    }
    back = roundtrip(obj)
    assert type(back["weights"]) is collections.OrderedDict
    assert list(back["weights"]) == ["layer", "bias"]
    assert_tensor_equal(back["weights"]["layer"], w)
    assert back["weights"]["layer"].is_leaf and back["weights"]["layer"].grad_fn is None
    assert back["list"][:4] == obj["list"][:4] and type(back["list"][3]) is float
    assert back["list"][4:] == obj["list"][4:] and type(back["list"][2]) is int
    assert back["tuple"] == obj["tuple"] and back["empty"] == obj["empty"]
    assert back["int_keys"] == obj["int_keys"]
    assert list(back["int_keys"]) == list(obj["int_keys"])
    misc = back["misc"]
    assert misc[:4] == obj["misc"][:4] and misc[4] is T.float16
    assert misc[5] == T.device("cpu") and misc[6] == T.Size([2, 3])
    assert isinstance(misc[6], T.Size)
    np.testing.assert_array_equal(misc[7], obj["misc"][7])
    assert type(misc[8]) is np.float32 and misc[8] == 1.5 and type(misc[9]) is np.int64
    assert type(misc[10]) is np.float64 and type(misc[11]) is np.bool_
    assert back["unicode é ✓"] == "値"
    assert math.isnan(roundtrip([math.nan])[0])


def test_non_leaf_saves_as_leaf_and_one_object_stays_one():
    x = T.ones(2, requires_grad=True)
    y = x * 2
    t = T.arange(3)
    back = roundtrip({"y": y, "a": t, "b": [t]})
    assert back["y"].requires_grad and back["y"].is_leaf  # as torch.save / torch.load
    assert back["a"] is back["b"][0]  # the same tensor object, saved once
    view = t[1:]
    again = roundtrip([t, view])  # storage sharing between *different* tensors is not kept
    again[0][1] = 7
    assert again[1][0].item() == 1


def test_optimizer_style_state_dict_round_trips():
    state = {"state": {0: {"step": T.tensor(3.0), "exp_avg": T.randn(2, 2)},
                       1: {"step": T.tensor(3.0), "exp_avg": T.randn(2)}},
             "param_groups": [{"params": [0, 1], "lr": 1e-3, "betas": (0.9, 0.999),
                               "eps": 1e-8, "weight_decay": 0, "amsgrad": False,
                               "foreach": None, "maximize": False}]}
    back = roundtrip(state)
    assert back["param_groups"] == state["param_groups"]
    assert list(back["state"]) == [0, 1]
    for k in (0, 1):
        for name in ("step", "exp_avg"):
            assert_tensor_equal(back["state"][k][name], state["state"][k][name])


class _Pipe(io.RawIOBase):
    """A stream that cannot seek (a pipe, a socket)."""

    def __init__(self, data):
        self._inner = io.BytesIO(data)

    def readable(self):
        return True

    def readinto(self, b):
        return self._inner.readinto(b)


def test_streams_at_an_offset_and_unseekable_streams():
    saved = io.BytesIO()
    T.save({"w": T.ones(3), "n": 1}, saved)
    stream = io.BytesIO(b"prefix" + saved.getvalue())
    stream.seek(6)  # load reads from the stream's position to its end
    assert_tensor_equal(T.load(stream)["w"], T.ones(3))
    pipe = _Pipe(saved.getvalue())
    assert not pipe.seekable()
    back = T.load(pipe)
    assert_tensor_equal(back["w"], T.ones(3))
    assert back["n"] == 1


def test_paths_and_map_location(tmp_path):
    path = tmp_path / "model.pt"
    T.save({"w": T.ones(2)}, path)
    T.save({"w": T.ones(2)}, str(path))
    assert_tensor_equal(T.load(path)["w"], T.ones(2))
    for location in (None, "cpu", T.device("cpu"), {"cpu": "cpu"}):
        loaded = T.load(str(path), map_location=location, weights_only=True)
        assert loaded["w"].device == T.device("cpu")
    seen = []
    T.load(path, map_location=lambda t, loc: seen.append(loc))
    assert seen == ["cpu"]
    with pytest.raises(TypeError, match="map_location"):
        T.load(path, map_location=3)
    with pytest.raises(FileNotFoundError):
        T.load(tmp_path / "missing.pt")


@pytest.mark.parametrize("obj, what", [
    (collections.namedtuple("P", "a")(1), "P"), (object(), "object"), ([lambda: 0], "function"),
    ({"m": collections.defaultdict(int)}, "defaultdict"),
])
def test_unsupported_objects_are_refused_with_their_place(obj, what):
    with pytest.raises(TypeError, match=f"cannot store {what}"):
        T.save(obj, io.BytesIO())


def test_a_structure_containing_itself_is_refused():
    loop = [1]
    loop.append({"again": loop})
    with pytest.raises(ValueError, match=r"contains itself at obj\[1\]\['again'\]"):
        T.save(loop, io.BytesIO())
    shared = [1]
    assert roundtrip([shared, shared]) == [[1], [1]]  # the same list twice is no cycle


def test_cuda_tensors_need_a_gpu_or_map_location():
    buf = io.BytesIO()
    T.save({"w": T.ones(2)}, buf)
    raw = buf.getvalue()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header["__metadata__"]
    meta["retrograd"] = meta["retrograd"].replace('"device":"cpu"', '"device":"cuda:0"')
    new_header = json.dumps(header).encode()
    raw = struct.pack("<Q", len(new_header)) + new_header + raw[8 + n:]
    if not T.cuda.is_available():
        with pytest.raises(RuntimeError, match="map_location='cpu'"):
            T.load(io.BytesIO(raw))
    assert T.load(io.BytesIO(raw), map_location="cpu")["w"].device == T.device("cpu")


# ------------------------------------------------------------------ safetensors interop
def test_safetensors_reads_our_files(tmp_path):
    numpy_st = pytest.importorskip("safetensors.numpy")
    tensors = {f"t_{d.name}": _example(d, (2, 3)) for d in DTYPES}
    tensors["scalar"] = T.tensor(2.5)
    tensors["empty"] = T.zeros(0, 4)
    tensors["strided"] = T.arange(12.0).reshape(3, 4).t()
    path = tmp_path / "ours.safetensors"
    T.save(tensors, path)
    theirs = numpy_st.load_file(str(path))
    assert set(theirs) == set(tensors)
    for name, t in tensors.items():
        np.testing.assert_array_equal(theirs[name], t.numpy())
        assert theirs[name].dtype == t.numpy().dtype and theirs[name].shape == tuple(t.shape)


def test_we_read_safetensors_files(tmp_path):
    numpy_st = pytest.importorskip("safetensors.numpy")
    arrays = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array(True),
              "c": np.zeros((0, 2), np.int64), "d": np.arange(4, dtype=np.uint8)}
    path = tmp_path / "theirs.safetensors"
    numpy_st.save_file(arrays, str(path), metadata={"note": "written by safetensors"})
    back = T.load(path)
    assert set(back) == set(arrays)
    for name, arr in arrays.items():
        np.testing.assert_array_equal(back[name].numpy(), arr)
        assert back[name].numpy().dtype == arr.dtype
    torch_st = pytest.importorskip("safetensors.torch")
    torch = pytest.importorskip("torch")
    torch_path = tmp_path / "torch.safetensors"
    torch_st.save_file({"w": torch.ones(2, 2, dtype=torch.float16)}, str(torch_path))
    assert_tensor_equal(T.load(torch_path)["w"], T.ones(2, 2, dtype=T.float16))


# ------------------------------------------------------------------ damaged and forged files
def _file(header: dict, data: bytes = b"", length=None) -> io.BytesIO:
    raw = json.dumps(header).encode()
    n = len(raw) if length is None else length
    f = io.BytesIO(struct.pack("<Q", n) + raw + data)
    f.name = "forged.pt"
    return f


def _entry(dtype="F32", shape=(2,), offsets=(0, 8)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


@pytest.mark.parametrize("make, message", [
    (lambda: io.BytesIO(b"\x01\x02"), "too short"),
    (lambda: io.BytesIO(np.random.default_rng(0).bytes(200)), "over the"),
    (lambda: _file({"a": _entry()}, length=2 ** 40), "over the"),
    (lambda: _file({"a": _entry()}, length=5000), "truncated"),
    (lambda: io.BytesIO(struct.pack("<Q", 4) + b"\xff\xfe{}"), "not valid UTF-8 JSON"),
    (lambda: io.BytesIO(struct.pack("<Q", 4) + b"[1] "), "not an object"),
    (lambda: _file({"a": _entry(offsets=(0, 8))}, b"\x00" * 4), "truncated or forged"),
    (lambda: _file({"a": _entry(offsets=(0, 12))}, b"\x00" * 12), "needs 8 bytes"),
    (lambda: _file({"a": _entry(offsets=(8, 0))}, b"\x00" * 8), "ending before"),
    (lambda: _file({"a": _entry(offsets=(0, 8)), "b": _entry(offsets=(4, 12))},
                   b"\x00" * 12), "overlaps"),
    (lambda: _file({"a": _entry(offsets=(4, 12))}, b"\x00" * 12), "belong to no tensor"),
    (lambda: _file({"a": _entry()}, b"\x00" * 9), "extra bytes"),
    (lambda: _file({"a": _entry(shape=(-2,))}, b"\x00" * 8), "shape"),
    (lambda: _file({"a": _entry(shape=(2 ** 62, 2 ** 62))}, b"\x00" * 8), "needs"),
    (lambda: _file({"a": _entry(dtype="BF16", offsets=(0, 4))}, b"\x00" * 4), "BF16"),
    (lambda: _file({"a": _entry(offsets=(0, "8"))}, b"\x00" * 8), "data_offsets"),
    (lambda: _file({"a": 5}), "not an object"),
    (lambda: _file({"__metadata__": {"retrograd": '{"tensor": "nope"}'}}), "nope"),
    (lambda: _file({"__metadata__": {"retrograd": '{"eval": "boom"}'}}), "does not know"),
    (lambda: _file({"__metadata__": {"retrograd": "{not json"}}), "malformed structure"),
    (lambda: _file({"__metadata__": {"retrograd": '{"dict": [[{"list": []}, 1]]}'}}),
     "malformed structure"),
    (lambda: _file({"__metadata__": {"retrograd": '{"dtype": "complex128"}'}}),
     "malformed structure"),
    (lambda: _file({"a": _entry("I64", (1,), (0, 8)), "__metadata__": {
        "retrograd": '{"tensor": "a", "requires_grad": true}'}}, b"\x00" * 8), "requires_grad"),
    (lambda: _file({"__metadata__": {"retrograd": "[" * 100000 + "]" * 100000}}),
     "nested too deeply"),
])
def test_damaged_files_raise_clear_errors(make, message):
    f = make()
    with pytest.raises(RuntimeError, match=message) as info:
        T.load(f)
    assert "retrograd.load:" in str(info.value)


def test_errors_name_the_file(tmp_path):
    path = tmp_path / "cut.pt"
    T.save({"w": T.ones(100)}, path)
    raw = path.read_bytes()
    for cut in (3, 20, len(raw) - 1):
        path.write_bytes(raw[:cut])
        with pytest.raises(RuntimeError, match="cut.pt") as info:
            T.load(path)
        assert "truncated" in str(info.value) or "too short" in str(info.value)
    assert_tensor_equal(T.load(io.BytesIO(raw))["w"], T.ones(100))


def test_docstring_examples_run():
    import doctest

    import retrograd.serialization as module

    assert doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0

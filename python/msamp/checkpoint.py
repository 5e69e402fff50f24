"""Reading msamp checkpoints (and --init / --data files) without a session.

Checkpoints are safetensors files in storage precision. safetensors' own
numpy loader refuses the FP8 dtypes (numpy has none), so this small reader
returns every tensor in msamp's storage convention instead (see
msamp.session.STORAGE_DTYPES): FP8 as raw uint8 bytes, bf16 as uint16 bits.
The format is a little-endian u64 header length, a JSON header, and the
bytes; nothing else is needed.
"""

import json
import struct

import numpy as np

_DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16,
           "F8_E4M3": np.uint8, "F8_E5M2": np.uint8, "I64": np.int64,
           "I32": np.int32, "U8": np.uint8, "F64": np.float64, "BOOL": np.bool_}


def read(path):
    """``(tensors, metadata)``: arrays by name in storage dtype, and the
    ``__metadata__`` strings (msamp_version, level, graph_hash, step...)."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    metadata = header.pop("__metadata__", {}) or {}
    base = 8 + n
    tensors = {}
    for name, info in header.items():
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        begin, end = info["data_offsets"]
        array = np.frombuffer(blob[base + begin:base + end], dtype=dtype)
        tensors[name] = array.reshape(info["shape"]).copy()
    return tensors, metadata

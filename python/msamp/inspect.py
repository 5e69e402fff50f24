"""Looking inside an FP8 step: scales, amax histories, casts that lose values,
and the precision of every GEMM.

Everything here reads what the compiler and runtime keep anyway - the
``scaling_state`` tensors of the session (``<tensor>.scale``,
``<tensor>.amax_history``, docs/Interfaces.md 2) and the compiled IR - so
inspecting a run never changes it.

Naming: ``<tensor>`` is the quantized value, e.g. ``fc1.fprop.input``,
``fc2.wgrad.grad_output`` (delayed scaling: a scale and a history),
``fc1.weight`` (the FP16 storage scale of a GEMM weight) or
``fc1.weight.exp_avg`` (an O2 optimizer moment's scale).
"""

import numpy as np

from . import numerics


def _state(source):
    """(dict name -> array, set of scaling-state names) from a Session, a
    Trainer, or a plain dict (e.g. a checkpoint read with safetensors)."""
    session = getattr(source, "session", source)
    if hasattr(session, "state_specs"):
        names = {s.name for s in session.state_specs if s.role == "scaling_state"}
        return session.state_dict(roles=("scaling_state",)), names
    names = {n for n in source if n.endswith((".scale", ".amax_history"))}
    return dict(source), names


def scales(source):
    """``{tensor: scale}`` for every scale in the state (stored = real *
    scale)."""
    state, names = _state(source)
    return {n[:-len(".scale")]: float(state[n]) for n in names if n.endswith(".scale")}


def amax_histories(source):
    """``{tensor: history}`` (f32 arrays, element 0 the most recent amax)
    for every delayed-scaled tensor."""
    state, names = _state(source)
    return {n[:-len(".amax_history")]: np.asarray(state[n], np.float32).copy()
            for n in names if n.endswith(".amax_history")}


def tensor_format(tensor, fp8_format="hybrid"):
    """The format a scaled tensor targets, from its name: output gradients
    E5M2 in the hybrid recipe, f16 for GEMM weights' storage and second
    moments, E4M3 otherwise (forward operands, first moments)."""
    if tensor.endswith(".exp_avg_sq"):
        return "f16"
    if tensor.endswith(".grad_output") or ".grad_output." in tensor:
        return "e5m2" if fp8_format == "hybrid" else "e4m3"
    if tensor.endswith(".exp_avg") or ".fprop." in tensor or ".dgrad." in tensor \
            or ".wgrad." in tensor:
        return "e4m3"
    return "f16"  # a param's storage scale


def cast_counts(x, scale, to="e4m3"):
    """What a scaled cast of ``x`` loses: ``{"overflow", "underflow",
    "total"}``.

    overflow: elements with |x * scale| > max of the format (saturated, or
    Inf for f16); underflow: nonzero elements whose |x * scale| rounds to
    zero (at most half the smallest subnormal; the tie rounds to even, 0).
    The product is one f32 rounding, as in the runtime.
    """
    f = numerics.fmt(to)
    y = np.abs(np.asarray(x, np.float32) * np.float32(scale))
    nonzero = np.asarray(x) != 0
    return {"overflow": int(np.count_nonzero(y > f.max)),
            "underflow": int(np.count_nonzero(nonzero & (y <= f.min_subnormal / 2))),
            "total": int(np.size(x))}


def scaling_table(source, fp8_format="hybrid"):
    """One row per scaled tensor: ``{"tensor", "format", "scale",
    "amax", "history_max", "headroom"}`` where amax is the most recent
    recorded amax (None without a history) and headroom = max /
    (history_max * scale): below 1 the next delayed cast saturates."""
    sc = scales(source)
    hist = amax_histories(source)
    rows = []
    for tensor in sorted(sc):
        f = tensor_format(tensor, fp8_format)
        h = hist.get(tensor)
        amax = float(h[0]) if h is not None and h.size else None
        hmax = float(h.max()) if h is not None and h.size else None
        headroom = (numerics.fmt(f).max / (hmax * sc[tensor])
                    if hmax and sc[tensor] else None)
        rows.append({"tensor": tensor, "format": f, "scale": sc[tensor],
                     "amax": amax, "history_max": hmax, "headroom": headroom})
    return rows


def weight_cast_counts(session, to="e4m3"):
    """``{param: cast_counts}`` for every scaled (FP16-stored) GEMM weight,
    quantized to ``to`` with MS-AMP's just-in-time power-of-two scale, as
    the compiled step does for its FP8 GEMMs."""
    sc = scales(session)
    out = {}
    for name in session.param_names:
        if name not in sc:
            continue
        w = session.param(name)
        s = numerics.pow2_scale(np.abs(w).max(), to)
        out[name] = {**cast_counts(w, s, to), "scale": s}
    return out


def dequantize(state, name, dtype=None):
    """The real value of state tensor ``name`` from a state dict: raw
    storage decoded (FP8/bf16 bits, f16) and divided by ``<name>.scale`` when
    the state has one. ``dtype``: the MLIR storage type when the array alone
    does not say (uint8 is taken as E4M3, the format of scaled FP8 state)."""
    raw = state[name]
    if dtype is None:
        dtype = {np.dtype(np.float16): "f16", np.dtype(np.uint8): "f8E4M3FN",
                 np.dtype(np.uint16): "bf16"}.get(np.asarray(raw).dtype, "f32")
    value = numerics.decode(raw, dtype)
    scale = state.get(name + ".scale")
    if scale is not None:
        value = value / np.float32(scale)
    return value


def gemm_table(compiled, explain=False):
    """The precision of every GEMM of a CompiledStep (or a Session's /
    Trainer's) as text: kind, layer, precision, and why a GEMM stayed in
    high precision when ``explain``."""
    from .compiler import CompiledStep
    if not isinstance(compiled, CompiledStep):  # a Trainer or a Session
        compiled = getattr(compiled, "session", compiled).compiled
    rows = [("kind", "layer", "precision", "why")]
    for g in compiled.gemms(explain=explain):
        rows.append((g.kind, g.layer, ("FP8 " if g.fp8 else "") + g.precision, g.why))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = []
    for r in rows:
        cells = [r[i].ljust(widths[i]) for i in range(3)]
        lines.append("  ".join(cells + [r[3]]).rstrip())
    return "\n".join(lines) + "\n"

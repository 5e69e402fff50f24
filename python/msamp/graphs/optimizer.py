"""The ``msamp.optimizer`` module attribute (docs/Interfaces.md section 1).

The optimizer is declared, not traced: a plain dictionary any exporter can write.
Defaults follow the contract (PyTorch semantics): weight_decay is 1e-2 for AdamW
and 0 for Adam and SGD.
"""

from .emitter import float_literal

KINDS = ("adamw", "adam", "sgd")


def optimizer_attr(kind="adamw", lr=1e-3, weight_decay=None, momentum=0.0,
                   beta1=0.9, beta2=0.999, eps=1e-8):
    """The attribute text, e.g. ``{kind = "adamw", lr = 0.001 : f64, ...}``."""
    if kind not in KINDS:
        raise ValueError(f"unknown optimizer {kind!r} (expected one of {KINDS})")
    if weight_decay is None:
        weight_decay = 1e-2 if kind == "adamw" else 0.0

    def f64(v):
        return f"{float_literal(v)} : f64"

    fields = [f'kind = "{kind}"', f"lr = {f64(lr)}"]
    if kind == "sgd":
        fields += [f"momentum = {f64(momentum)}", f"weight_decay = {f64(weight_decay)}",
                   "nesterov = false"]
    else:
        fields += [f"beta1 = {f64(beta1)}", f"beta2 = {f64(beta2)}",
                   f"eps = {f64(eps)}", f"weight_decay = {f64(weight_decay)}"]
    return "{" + ", ".join(fields) + "}"

"""torch-mlir's lowering in a child process, for msamp.export.

torch-mlir 20261001 does not fail cleanly on some ops: ``torch.sort`` and
``torch.topk`` crash it (an LLVM "out of memory" abort, a segmentation
fault) and boolean-mask indexing (``x[x > 0]``) makes it allocate until the
machine swaps. In the exporting process any of these takes the user's
Python down. So the lowering runs in a forked child whose address space is
capped; the parent gets the MLIR text back, or the child's ExportError, or
its death, which becomes an ExportError naming the aten ops that kill the
lowering on their own (each op of the trace lowered alone, again in a
capped child).

Fork, not spawn: the child inherits the traced graph module as it is (an
fx GraphModule does not pickle reliably) and needs no re-import of torch.
"""

import os
import pickle
import signal

# The child's exit status when it ran out of its address space in Python (a
# MemoryError): like a crash, not like an error it could explain.
_OUT_OF_MEMORY = 3

# The child may grow by this fraction of the machine's memory beyond what
# it inherited (MSAMP_EXPORT_MEMORY_GB overrides it, in GiB).
_MEMORY_FRACTION = 0.5


class ChildDied(Exception):
    """The child ended without an answer: ``why`` says how."""

    def __init__(self, why):
        super().__init__(why)
        self.why = why


def _limit_bytes():
    gib = os.environ.get("MSAMP_EXPORT_MEMORY_GB")
    if gib:
        return int(float(gib) * (1 << 30))
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    with open("/proc/self/statm") as f:
        inherited = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    return inherited + int(total * _MEMORY_FRACTION)


def run(fn):
    """``fn()`` in a forked child with a capped address space: its return
    value, or the exception it raised (re-raised here if it pickles, else a
    RuntimeError with its text). A child that dies, or runs out of memory
    (a MemoryError), raises ChildDied."""
    import resource
    limit = _limit_bytes()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        os.close(read_end)
        status = 0
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            try:
                answer = ("ok", fn())
            except MemoryError:
                # What is left of the address space may not even pickle an
                # answer; the parent reports it as a death.
                os._exit(_OUT_OF_MEMORY)
            except BaseException as e:  # noqa: BLE001 - handed to the parent
                try:
                    pickle.dumps(e)
                    answer = ("raise", e)
                except Exception:  # noqa: BLE001
                    answer = ("raise", RuntimeError(f"{type(e).__name__}: {e}"))
            data = pickle.dumps(answer)
            with os.fdopen(write_end, "wb") as f:
                f.write(data)
        except BaseException:  # noqa: BLE001 - e.g. MemoryError while pickling
            status = 1
        os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as f:
        data = f.read()
    _, wait_status = os.waitpid(pid, 0)
    if data:
        try:
            kind, value = pickle.loads(data)
        except Exception:  # noqa: BLE001 - a truncated answer
            kind, value = None, None
        if kind == "ok":
            return value
        if kind == "raise":
            raise value
    if os.WIFSIGNALED(wait_status):
        sig = os.WTERMSIG(wait_status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        why = f"killed by {name}"
    elif os.WEXITSTATUS(wait_status) == _OUT_OF_MEMORY:
        why = "ran out of memory"
    else:
        why = f"exited with status {os.WEXITSTATUS(wait_status)}"
    raise ChildDied(f"{why} (address space capped at {limit >> 20} MiB; "
                    "MSAMP_EXPORT_MEMORY_GB raises the cap)")


def _single_op_module(node):
    """A graph module of ``node`` alone: its tensor arguments become
    placeholders of the traced shapes and dtypes."""
    import torch
    import torch.fx as tfx
    graph = tfx.Graph()
    mapping = {}

    def arg(a):
        if isinstance(a, tfx.Node):
            if a not in mapping:
                val = a.meta.get("val")
                if not isinstance(val, torch.Tensor):
                    raise ValueError("non-tensor input")
                p = graph.placeholder(f"in{len(mapping)}")
                p.meta["val"] = val
                mapping[a] = p
            return mapping[a]
        return a

    args = tfx.node.map_aggregate(node.args, arg)
    kwargs = tfx.node.map_aggregate(node.kwargs, arg)
    new = graph.call_function(node.target, args, kwargs)
    new.meta = dict(node.meta)
    graph.output(new)
    return tfx.GraphModule(torch.nn.Module(), graph)


def ops_that_kill(gm, lower):
    """The aten ops of ``gm`` whose lowering alone (``lower(module)``) kills
    the child, each distinct op tried once."""
    seen, culprits = set(), []
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target in seen:
            continue
        seen.add(node.target)
        if not str(node.target).startswith("aten."):
            continue
        try:
            single = _single_op_module(node)
        except ValueError:
            continue
        try:
            run(lambda: lower(single) and None)
        except ChildDied:
            culprits.append(str(node.target))
        except Exception:  # noqa: BLE001 - a clean failure is not a crash
            pass
    return culprits

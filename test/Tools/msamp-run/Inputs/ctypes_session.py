"""Drives libmsamp_session through ctypes, as the Python package will:
loaded RTLD_LOCAL (ctypes' default), so the session itself must make
libmsamp_runtime's symbols visible to the train_step.so it dlopens.

  ctypes_session.py LIBDIR COMPILED_DIR   prints the level and 3 losses at
                                          seed 0 on synthetic batches
"""

import ctypes
import sys


def main(lib_dir, compiled):
    lib = ctypes.CDLL(lib_dir + "/libmsamp_session.so")
    lib.msamp_last_error_message.restype = ctypes.c_char_p
    lib.msamp_session_open.argtypes = [ctypes.c_char_p,
                                       ctypes.POINTER(ctypes.c_void_p)]
    lib.msamp_session_level.argtypes = [ctypes.c_void_p]
    lib.msamp_session_level.restype = ctypes.c_char_p
    lib.msamp_session_init.argtypes = [ctypes.c_void_p, ctypes.c_uint64,
                                       ctypes.c_char_p, ctypes.c_void_p]
    lib.msamp_session_synthetic_batch.argtypes = [
        ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int64, ctypes.c_int64]
    lib.msamp_session_step.argtypes = [ctypes.c_void_p, ctypes.c_float,
                                       ctypes.c_uint32,
                                       ctypes.POINTER(ctypes.c_float)]
    lib.msamp_session_get_step.argtypes = [ctypes.c_void_p]
    lib.msamp_session_get_step.restype = ctypes.c_int64
    lib.msamp_session_close.argtypes = [ctypes.c_void_p]

    def check(rc):
        if rc != 0:
            raise SystemExit(f"error {rc}: "
                             f"{lib.msamp_last_error_message().decode()}")

    session = ctypes.c_void_p()
    check(lib.msamp_session_open(compiled.encode(), ctypes.byref(session)))
    print("level", lib.msamp_session_level(session).decode())
    check(lib.msamp_session_init(session, 0, None, None))
    for step in range(1, 4):
        check(lib.msamp_session_synthetic_batch(session, 0, step, 2))
        loss = ctypes.c_float()
        check(lib.msamp_session_step(session, 0.01, 0, ctypes.byref(loss)))
        print(f"step {lib.msamp_session_get_step(session)} loss {loss.value:.6f}")
    lib.msamp_session_close(session)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

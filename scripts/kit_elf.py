#!/usr/bin/env python3
"""ELF dynamic-section helper for scripts/gpu-kit.sh (no patchelf needed).

  kit_elf.py runpath FILE NEW   rewrite FILE's DT_RUNPATH (or DT_RPATH) string
                                in place to NEW; NEW must not be longer than
                                the old string (CMake's build-tree RUNPATHs
                                are long absolute paths, so "$ORIGIN/../lib"
                                always fits); the rest is NUL-padded.
  kit_elf.py show FILE          print "needed NAME" and "runpath VALUE" lines.

Only little-endian ELF64 (x86-64, aarch64) is handled; anything else is
refused with a message and exit status 1.
"""
import struct
import sys

DT_NULL, DT_NEEDED, DT_STRTAB, DT_RPATH, DT_RUNPATH = 0, 1, 5, 15, 29


class ElfError(Exception):
    pass


def _dynamic(data):
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError("not a little-endian ELF64 file")
    e_phoff, = struct.unpack_from("<Q", data, 0x20)
    e_phentsize, e_phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dyn = [], None
    for i in range(e_phnum):
        off = e_phoff + i * e_phentsize
        p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = struct.unpack_from(
            "<IIQQQQQQ", data, off)
        if p_type == 1:  # PT_LOAD
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == 2:  # PT_DYNAMIC
            dyn = (p_offset, p_filesz)
    if dyn is None:
        raise ElfError("no dynamic section (a static executable?)")
    entries = []
    for off in range(dyn[0], dyn[0] + dyn[1], 16):
        tag, val = struct.unpack_from("<qQ", data, off)
        if tag == DT_NULL:
            break
        entries.append((tag, val))

    def file_offset(vaddr):
        for start, offset, size in loads:
            if start <= vaddr < start + size:
                return vaddr - start + offset
        raise ElfError("address 0x%x is in no loaded segment" % vaddr)

    strtab = [file_offset(v) for t, v in entries if t == DT_STRTAB]
    if not strtab:
        raise ElfError("no DT_STRTAB")
    return entries, strtab[0]


def _string(data, offset):
    end = data.index(b"\0", offset)
    return data[offset:end].decode()


def show(path):
    data = open(path, "rb").read()
    entries, strtab = _dynamic(data)
    for tag, val in entries:
        if tag == DT_NEEDED:
            print("needed", _string(data, strtab + val))
        elif tag in (DT_RUNPATH, DT_RPATH):
            print("runpath", _string(data, strtab + val))


def set_runpath(path, new):
    data = bytearray(open(path, "rb").read())
    entries, strtab = _dynamic(data)
    paths = [v for t, v in entries if t in (DT_RUNPATH, DT_RPATH)]
    if not paths:
        raise ElfError("has no RUNPATH to rewrite (link it with one)")
    for val in paths:
        offset = strtab + val
        old = _string(data, offset)
        if len(new.encode()) > len(old.encode()):
            raise ElfError("new RUNPATH '%s' is longer than the old '%s'" %
                           (new, old))
        data[offset:offset + len(old)] = new.encode().ljust(len(old), b"\0")
    open(path, "wb").write(bytes(data))


def main(argv):
    try:
        if len(argv) == 4 and argv[1] == "runpath":
            set_runpath(argv[2], argv[3])
        elif len(argv) == 3 and argv[1] == "show":
            show(argv[2])
        else:
            sys.stderr.write(__doc__)
            return 2
    except (OSError, ElfError, ValueError, struct.error) as e:
        sys.stderr.write("kit_elf.py: %s: %s\n" % (argv[2], e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

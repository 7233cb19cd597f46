"""Reading the files a user gives the runner (waivers, must-pass lists): UTF-8 text only, with
an error naming the file, the line and the first bad byte otherwise."""
import os
import stat

from . import InputError

LIMIT = 16 * 1024 * 1024


def read_text(path, what):
    """A file's text, which must be UTF-8 (an optional BOM is dropped): else InputError naming
    the file and the first bad byte."""
    try:
        if stat.S_ISFIFO(os.stat(path).st_mode):
            raise InputError(f"{what} {path} is a pipe: give a file")
        with open(path, "rb") as f:
            data = f.read(LIMIT + 1)
    except OSError as error:
        raise InputError(f"cannot read {what} {path}: {error.strerror}") from None
    if len(data) > LIMIT:
        raise InputError(f"{what} {path} is larger than 16 MiB: not a file ndkct reads")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}: {what} is not UTF-8 text (byte 0x{data[error.start]:02x} "
                         f"at offset {error.start})") from None
    if "\0" in text:
        line = text[:text.index("\0")].count("\n") + 1
        raise InputError(f"{path}:{line}: {what} holds a NUL byte: not a text file")
    return text.removeprefix("\ufeff")

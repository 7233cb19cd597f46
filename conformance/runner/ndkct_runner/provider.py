"""The provider a run tests: the spec as the user writes it, and the argument the test
executables take (--provider=...)."""
import os

from . import InputError

KINDS = "model, model:seed=N, model:profile=NAME, lib:PATH or verbs[:device=NAME]"


class Provider:
    def __init__(self, text):
        self.text = text
        self.path = None
        self.options = {}
        parts = text.split(":")
        self.kind = parts[0]
        if self.kind == "lib":
            if len(parts) < 2 or not parts[1]:
                raise InputError(f"provider '{text}': lib needs the path of a shared library "
                                 f"(lib:/path/libvendor_ndk.so)")
            self.path, rest = os.path.abspath(parts[1]), parts[2:]
        elif self.kind in ("model", "verbs"):
            rest = parts[1:]
        elif "/" in text or text.endswith(".so"):
            raise InputError(f"unknown provider '{text}': a provider library is given as "
                             f"lib:{text}")
        else:
            raise InputError(f"unknown provider '{text}' (use {KINDS})")
        for item in rest:
            key, eq, value = item.partition("=")
            if key not in ("seed", "profile", "device") or not eq or not value:
                raise InputError(f"provider '{text}': unknown option '{item}' "
                                 f"(seed=N, profile=NAME|FILE, device=NAME)")
            if key == "seed" and not (value.isascii() and value.isdigit()):
                raise InputError(f"provider '{text}': seed '{value}' is not a whole number")
            if key == "seed" and int(value) > 2**64 - 1:
                raise InputError(f"provider '{text}': seed {value} is out of range (0..2^64-1)")
            if key == "device" and self.kind == "model":
                raise InputError(f"provider '{text}': the reference provider has no device")
            self.options[key] = value

    def override(self, key, value, option):
        if value is None:
            return
        if key in self.options and self.options[key] != str(value):
            raise InputError(f"{option} {value} contradicts the provider spec '{self.text}' "
                             f"({key}={self.options[key]})")
        self.options[key] = str(value)

    @property
    def seed(self):
        return int(self.options.get("seed", 1))

    @property
    def profile(self):
        return self.options.get("profile", "default")

    def library(self, build):
        """The shared library that implements the provider, or None (built in)."""
        if self.kind == "lib":
            return self.path
        if self.kind == "verbs":
            return os.path.join(build, "adapters", "verbs", "libndkct_verbs_provider.so")
        return None

    def check(self, build):
        lib = self.library(build)
        if lib is None:
            return
        if self.kind == "verbs" and not os.path.exists(lib):
            raise InputError(f"the verbs provider is not built ({lib} is missing): it needs "
                             f"rdma-core's development files (Debian: libibverbs-dev "
                             f"librdmacm-dev), then ./ndkct build")
        if not os.path.exists(lib):
            raise InputError(f"provider '{self.text}': no such file: {lib}")
        if not os.path.isfile(lib) or not os.access(lib, os.R_OK):
            raise InputError(f"provider '{self.text}': {lib} is not a readable file")
        if any(c in lib for c in ":,"):
            raise InputError(f"provider '{self.text}': the path may not contain ':' or ','")

    def argument(self, build):
        """--provider=... for the test executables."""
        lib = self.library(build)
        parts = ["model"] if lib is None else ["lib", lib]
        for key in ("seed", "profile", "device"):
            if key in self.options or key == "seed":
                value = self.options.get(key, "1")
                if key == "profile" and os.path.exists(value):
                    value = os.path.abspath(value)
                parts.append(f"{key}={value}")
        return ":".join(parts)

    def canonical(self):
        """The spec as recorded in the report: kind, path and every option."""
        parts = [self.kind] + ([self.path] if self.path else [])
        options = dict(self.options, seed=str(self.seed))
        parts += [f"{k}={v}" for k, v in sorted(options.items())]
        return ":".join(parts)

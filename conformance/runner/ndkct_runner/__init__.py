"""ndkct's runner: the main job behind `./ndkct run` (see conformance/runner/README.md)."""


class InputError(Exception):
    """Bad input from the user (an option, a file, a provider): the message names the problem.
    The runner prints it and exits with status 2; nothing is run."""

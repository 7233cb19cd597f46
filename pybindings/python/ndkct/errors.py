"""Exceptions of the ndkct package: each carries the NTSTATUS name and the rule IDs."""

from . import _ndkct


def _rules_of(violations):
    rules = []
    for v in violations:
        if v.warning:
            continue
        for r in v.rules:
            if r not in rules:
                rules.append(r)
    return rules


class NdkError(Exception):
    """An NDK call failed where the caller needed it to succeed (a create, a registration...).

    Attributes: ``call`` (the NDK function, e.g. ``"NdkCreateMr"``), ``status`` (an
    :class:`ndkct.Status`, or an int for an unnamed value), ``status_name``, and the oracle's
    ``violations`` raised by this call with their ``rules`` (empty when the failure was allowed:
    the provider may refuse, e.g. for lack of resources).
    """

    def __init__(self, call, status, violations=()):
        self.call = call
        self.status = status
        self.status_name = _ndkct.status_name(int(status))
        self.violations = list(violations)
        self.rules = _rules_of(self.violations)
        message = f"{call} failed with {self.status_name}"
        if self.rules:
            message += "; oracle: " + "; ".join(
                v.describe() for v in self.violations if not v.warning)
        super().__init__(message)


class ViolationError(AssertionError):
    """The oracle found that the provider broke documented rules.

    ``violations`` are :class:`ndkct.Violation` values, ``rules`` their rule IDs (failures
    only), ``status_name`` the status of the call that revealed them when there was one. The
    message has one line per violation: ``oracle: FR-ALIGN-01: expected ..., got ...``.
    """

    def __init__(self, violations, call=None, status=None):
        self.violations = [v for v in violations if not v.warning]
        self.rules = _rules_of(self.violations)
        self.call = call
        self.status = status
        self.status_name = None if status is None else _ndkct.status_name(int(status))
        head = f"{call} broke {', '.join(self.rules)}" if call else \
            f"the provider broke {', '.join(self.rules)}"
        lines = [head] + [f"oracle: {v.describe()}" for v in self.violations]
        super().__init__("\n".join(lines))

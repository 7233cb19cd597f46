"""Which NDKPI version a run uses. By default the highest version both the provider's identity
(NDKCT_PROVIDER_IDENTITY.NdkVersion: the highest it implements) and the profile (its
ndk_version: the highest it describes) allow; an explicit --ndk-version is obeyed. When the
version differs from the profile's, the run uses the shipped profile of that version if the
profile is the default one (ndkpi-1.2 is the default readings at 1.2), else the same profile with
its ndk_version set to the version (a file in the output folder)."""
import json
import os
import subprocess

from . import InputError

KNOWN = ("1.1", "1.2", "2.1")
SHIPPED = {"1.1": "ndkpi-1.1", "1.2": "ndkpi-1.2", "2.1": "default"}


def key(version):
    try:
        major, minor = (int(x) for x in version.split("."))
    except (AttributeError, ValueError):
        return None
    return major, minor


def resolve_profile(build, name):
    """The profile as ndkct-spec resolves it: (document, name, ndk_version); errors name file,
    line and field."""
    tool = os.path.join(build, "spec", "ndkct-spec")
    if not os.path.exists(tool):
        raise InputError(f"{tool} is missing: build first (./ndkct build)")
    done = subprocess.run([tool, "profile", name], capture_output=True)
    stderr = done.stderr.decode("utf-8", "replace").strip()
    if done.returncode != 0:
        problem = " ".join(stderr.removeprefix("ndkct-spec: ").split())
        raise InputError(f"bad profile '{name}': {problem}")
    document = json.loads(done.stdout.decode("utf-8", "replace"))
    return document, document["name"], document.get("ndk_version", "2.1")


def choose(identity_version, profile_name, profile_version, explicit):
    """(version, why): the NDKPI version of the run and a sentence saying why."""
    if explicit:
        return explicit, f"NDKPI {explicit}: as --ndk-version asks"
    mine = key(identity_version)
    if mine is None:
        raise InputError(f"the provider's identity gives NdkVersion '{identity_version}', not a "
                         f"version (major.minor)")
    allowed = [v for v in KNOWN if key(v) <= mine and key(v) <= key(profile_version)]
    if not allowed:
        raise InputError(f"the provider implements NDKPI up to {identity_version} (its "
                         f"identity), and ndkct knows {', '.join(KNOWN)}: nothing to run at")
    version = allowed[-1]
    return version, (f"NDKPI {version}: the highest version both the provider (up to "
                     f"{identity_version}, its identity) and the profile '{profile_name}' "
                     f"(up to {profile_version}) allow")


def profile_for(build, out, profile_arg, document, name, profile_version, version):
    """The profile argument for the chosen version: the profile itself, the shipped profile of
    that version, or the profile with ndk_version changed, written to OUT."""
    if version == profile_version:
        return profile_arg
    if name == "default" and version in SHIPPED:
        return SHIPPED[version]
    derived = dict(document, ndk_version=version)
    path = os.path.join(out, f"profile-{name}-ndkpi-{version}.json")
    if any(c in path for c in ":,"):
        raise InputError(f"--out {out}: the run writes the profile '{name}' at NDKPI {version} "
                         f"there, and a profile path may not contain ':' or ','")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(derived, f, indent=1)
        f.write("\n")
    return path

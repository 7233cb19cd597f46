#!/usr/bin/python3
"""The install a vendor builds against (ctest -L packaging).

install: `cmake --install` into a fresh prefix; the skeleton of spec/PROVIDER.md (as the
         installed page has it) built out of tree twice, with find_package(ndkct) and with
         pkg-config; then run through the installed runner (`PREFIX/bin/ndkct run --provider
         lib:...`): the report's first line says to implement NdkCreatePd; the same run
         captured (--capture), judged offline (check-trace) and dumped (trace dump).
deb:     `cpack -G DEB` builds the Debian package; its contents are checked; as root with
         apt-get, it is installed (apt-get install ./ndkct_*.deb), the skeleton runs through
         /usr/bin/ndkct, and the package is removed again. Without root or apt-get: skipped
         (exit 77) after the contents check.

usage: install_test.py install|deb --build BUILD --work DIR
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


class Failure(Exception):
    pass


def check(condition, what, output=""):
    if not condition:
        raise Failure(what + (f"\n--- output ---\n{output}" if output else ""))


def sh(command, cwd=None, env=None, status=0, timeout=900):
    print("$ " + " ".join(command))
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, errors="replace")
    output = done.stdout + done.stderr
    if status is not None:
        check(done.returncode == status, f"exit {done.returncode}, expected {status}: "
              + " ".join(command), output[-4000:])
    return done, output


def skeleton(page):
    with open(page, encoding="utf-8") as f:
        text = f.read()
    blocks = [b for b in re.findall(r"```c\n(.*?)```", text, re.S) if "vendor.c" in b.split("\n")[0]]
    check(len(blocks) == 1, f"{page}: {len(blocks)} skeleton blocks")
    return blocks[0]


CONSUMER = """cmake_minimum_required(VERSION 3.16)
project(vendor C)
find_package(ndkct 0.1 REQUIRED)
add_library(vendor MODULE vendor.c)
target_link_libraries(vendor PRIVATE ndkct::headers)
set_target_properties(vendor PROPERTIES C_STANDARD 11 C_VISIBILITY_PRESET hidden)
target_compile_options(vendor PRIVATE -Wall -Wextra -Werror)
"""


def build_against(prefix, work):
    """The skeleton from the installed PROVIDER.md, built with find_package and with
    pkg-config; returns the library built with CMake."""
    page = os.path.join(prefix, "share", "doc", "ndkct", "PROVIDER.md")
    check(os.path.exists(page), f"{page} is not installed")
    source = os.path.join(work, "vendor")
    shutil.rmtree(source, ignore_errors=True)
    os.makedirs(source)
    with open(os.path.join(source, "vendor.c"), "w") as f:
        f.write(skeleton(page))
    with open(os.path.join(source, "CMakeLists.txt"), "w") as f:
        f.write(CONSUMER)
    build = os.path.join(work, "vendor-build")
    shutil.rmtree(build, ignore_errors=True)
    env = dict(os.environ)
    for k in ("CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER"):
        env.pop(k, None)
    sh(["cmake", "-S", source, "-B", build, f"-DCMAKE_PREFIX_PATH={prefix}"], env=env)
    sh(["cmake", "--build", build], env=env)
    library = os.path.join(build, "libvendor.so")
    check(os.path.exists(library), "no libvendor.so")
    # pkg-config: the same source, compiled with the page's flags and pkg-config's.
    env["PKG_CONFIG_PATH"] = os.path.join(prefix, "share", "pkgconfig")
    _, cflags = sh(["pkg-config", "--cflags", "ndkct"], env=env)
    check(f"-I{os.path.realpath(prefix)}/include" in cflags.replace(prefix, os.path.realpath(prefix))
          or "/include" in cflags, f"pkg-config --cflags ndkct: {cflags}")
    sh(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-shared", "-fPIC",
        "-fvisibility=hidden"] + cflags.split() + ["-o", os.path.join(work, "libvendor-pc.so"),
                                                    os.path.join(source, "vendor.c")], env=env)
    return library


def run_installed(ndkct, library, out):
    """The installed runner on the skeleton: exit 1, NDKPI 1.2, and the first summary line says
    to implement NdkCreatePd."""
    done, output = sh([ndkct, "run", "--provider", f"lib:{library}", "--out", out], status=1,
                      cwd=os.path.dirname(out))
    lines = [x for x in done.stderr.splitlines() if x.startswith("ndkct: Next:")]
    check(lines and lines[0].startswith("ndkct: Next: implement NdkCreatePd"),
          "the installed runner does not say to implement NdkCreatePd", done.stderr[-3000:])
    for name in ("result.json", "junit.xml", "report.html"):
        check(os.path.exists(os.path.join(out, name)), f"{name} missing")
    print("   " + lines[0])


def traces_installed(ndkct, library, work):
    """The installed traces path: the skeleton's run captured (--capture), the traces judged
    (check-trace: reports written; the skeleton's failures named offline as live) and dumped."""
    captured = os.path.join(work, "traces")
    sh([ndkct, "run", "--provider", f"lib:{library}", "--tests", "ndk.pd.*", "--capture",
        captured, "--out", os.path.join(work, "out-captured")], status=1, cwd=work)
    files = sorted(glob.glob(os.path.join(captured, "*.ndktrace")))
    check(files, f"ndkct run --capture wrote no trace into {captured}")
    out = os.path.join(work, "out-traces")
    done, output = sh([ndkct, "check-trace", captured, "--out", out], status=1, cwd=work)
    for name in ("result.json", "junit.xml", "report.html"):
        check(os.path.exists(os.path.join(out, name)), f"check-trace wrote no {name}", output)
    check("CPD-01" in output or "NdkCreatePd" in output,
          "check-trace of the skeleton's traces does not name NdkCreatePd", output[-3000:])
    done, output = sh([ndkct, "trace", "dump", files[0]], cwd=work)
    check("NdkCreatePd" in output, "ndkct trace dump shows no NdkCreatePd", output[-3000:])
    print(f"   traces: {len(files)} captured, judged and dumped by the installed ndkct")


def case_install(opts):
    prefix = os.path.join(opts.work, "prefix")
    shutil.rmtree(opts.work, ignore_errors=True)
    os.makedirs(opts.work)
    sh(["cmake", "--install", opts.build, "--prefix", prefix])
    for path in ("include/ndkct/provider.h", "include/ndkct/ndkpi.h", "bin/ndkct",
                 "share/ndkct/cmake/ndkctConfig.cmake", "share/pkgconfig/ndkct.pc",
                 "lib/ndkct/conformance/tests/conformance_tests", "lib/ndkct/spec/ndkct-spec",
                 "share/ndkct/conformance/runner/ndkct-run", "share/ndkct/reports/ndkct-report",
                 "share/ndkct/spec/rules/catalog", "share/ndkct/conformance/must-pass/default.txt",
                 "share/doc/ndkct/PROVIDER.md", "include/ndkct/capture.h",
                 "include/ndkct/trace_format.h", "share/ndkct/capture/capture.c",
                 "share/ndkct/capture/windows/ndkcap_wdm.c", "share/doc/ndkct/TRACE.md",
                 "lib/ndkct/conformance/trace/ndkct-trace"):
        check(os.path.exists(os.path.join(prefix, path)), f"{path} is not installed")
    library = build_against(prefix, opts.work)
    run_installed(os.path.join(prefix, "bin", "ndkct"), library, os.path.join(opts.work, "out"))
    traces_installed(os.path.join(prefix, "bin", "ndkct"), library, opts.work)
    done, output = sh([os.path.join(prefix, "bin", "ndkct"), "version"])
    print(f"install: headers, CMake package, pkg-config file and runner under {prefix}; the "
          f"skeleton builds against them and runs: {output.strip()}")


def case_deb(opts):
    shutil.rmtree(opts.work, ignore_errors=True)
    os.makedirs(opts.work)
    sh(["cpack", "-G", "DEB", "-B", opts.work], cwd=opts.build)
    debs = glob.glob(os.path.join(opts.work, "ndkct_*.deb"))
    check(len(debs) == 1, f"cpack made {debs}")
    deb = debs[0]
    _, contents = sh(["dpkg-deb", "--contents", deb])
    for path in ("./usr/bin/ndkct", "./usr/include/ndkct/provider.h",
                 "./usr/share/ndkct/cmake/ndkctConfig.cmake", "./usr/share/pkgconfig/ndkct.pc",
                 "./usr/lib/ndkct/conformance/tests/conformance_tests",
                 "./usr/lib/ndkct/conformance/trace/ndkct-trace", "./usr/include/ndkct/capture.h",
                 "./usr/share/ndkct/capture/windows/ndkcap_wdm.c"):
        check(path in contents, f"the package lacks {path}")
    _, info = sh(["dpkg-deb", "--info", deb])
    check("Package: ndkct" in info and "Depends:" in info, "package info", info)
    print(f"deb: {os.path.basename(deb)}, {len(contents.splitlines())} entries")
    if os.geteuid() != 0 or not shutil.which("apt-get") or os.environ.get("NDKCT_NO_APT"):
        print("deb: not root, no apt-get or NDKCT_NO_APT: not installed (skipped)")
        return 77
    # Several worktrees on one machine may run this at once: one at a time.
    lock = ["flock", "/tmp/ndkct-package-test.lock"]
    apt = ["apt-get", "-o", "DPkg::Lock::Timeout=300", "-y", "-q"]
    try:
        sh(lock + apt + ["install", "--reinstall", os.path.abspath(deb)], timeout=900)
        check(os.path.exists("/usr/bin/ndkct"), "/usr/bin/ndkct is not installed")
        library = build_against("/usr", opts.work)
        run_installed("/usr/bin/ndkct", library, os.path.join(opts.work, "out"))
    finally:
        sh(lock + apt + ["remove", "ndkct"], status=None, timeout=900)
    print("deb: installed with apt-get, the skeleton ran through /usr/bin/ndkct, removed")
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=("install", "deb"))
    p.add_argument("--build", required=True)
    p.add_argument("--work", required=True)
    opts = p.parse_args()
    opts.work = os.path.abspath(opts.work)
    try:
        status = {"install": case_install, "deb": case_deb}[opts.case](opts) or 0
    except Failure as failure:
        print(f"FAILED: {failure}")
        return 1
    print(f"{opts.case}: ok" if status == 0 else f"{opts.case}: skipped")
    return status


if __name__ == "__main__":
    sys.exit(main())

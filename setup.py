"""pip install . — the Python package `npuplan` (docs/api.md, "Python").

setuptools drives CMake (scikit-build-core is not in Debian 12): build_ext
configures the source tree into a build folder and builds the extension
target `_npuplan`; the package's Python files come from python/npuplan/.
Works offline with Debian's python3-setuptools, python3-wheel, cmake and the
-dev packages of scripts/setup.sh; there is no pyproject.toml, so pip uses the
installed setuptools instead of fetching one.

    python3 -m venv --system-site-packages /tmp/venv && /tmp/venv/bin/pip install .

Environment: NPUPLAN_BUILD_DIR reuses a configured CMake build folder (e.g.
build/: nothing is recompiled); else one is made under setuptools' build
folder. CMAKE_ARGS adds configure arguments; JOBS sets the build parallelism.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(npuplan VERSION ([0-9.]+)", text).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = Path(os.environ.get("NPUPLAN_BUILD_DIR") or Path(self.build_temp).resolve() / "cmake")
        if not (build_dir / "CMakeCache.txt").exists():
            args = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                    "-DNPUPLAN_BUILD_PYTHON=ON", "-DNPUPLAN_BUILD_TESTS=OFF", "-DNPUPLAN_BUILD_BENCH=OFF",
                    f"-DPython_EXECUTABLE={sys.executable}"]
            if shutil.which("ninja"):
                args += ["-G", "Ninja"]
            if shutil.which("ccache"):
                args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
            args += shlex.split(os.environ.get("CMAKE_ARGS", ""))
            subprocess.run(args, check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "_npuplan", "-j",
                        os.environ.get("JOBS", str(os.cpu_count() or 1))], check=True)
        built = sorted((build_dir / "python" / "npuplan").glob("_npuplan*.so"))
        if not built:
            raise RuntimeError(f"npuplan: no _npuplan*.so in {build_dir}/python/npuplan after the build")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], target)


# setuptools' own scratch (build/, *.egg-info) goes under build/pip/, not into the sources.
SCRATCH = ROOT / "build" / "pip"
SCRATCH.mkdir(parents=True, exist_ok=True)

setup(
    name="npuplan",
    version=version(),
    description="Graph to verified multi-stream execution plan for NPUs (Python bindings of npuplan's C++ API)",
    license="see the repository",
    packages=["npuplan"],
    package_dir={"": "python"},
    ext_modules=[Extension("npuplan._npuplan", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    install_requires=["numpy"],
    zip_safe=False,
    options={"build": {"build_base": str(SCRATCH)}, "egg_info": {"egg_base": str(SCRATCH)}},
)

# setup.py: copies libtilec.so (from $TILEC_LIBRARY, else ../build/libtilec.so, which `make`
# builds) into the package, so an installed tilec finds its library without the tree.
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        here = os.path.dirname(os.path.abspath(__file__))
        lib = os.environ.get("TILEC_LIBRARY") or os.path.join(here, "..", "build", "libtilec.so")
        if os.path.exists(lib):
            dst = os.path.join(self.build_lib, "tilec")
            os.makedirs(dst, exist_ok=True)
            shutil.copy(lib, os.path.join(dst, "libtilec.so"))
        else:
            print("tilec: %s not found (run make first); the package will look for libtilec.so "
                  "through $TILEC_LIBRARY or the system's library path" % lib)


setup(cmdclass={"build_py": BuildWithLibrary})

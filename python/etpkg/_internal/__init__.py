"""etpkg's implementation; nothing here is public API (see etpkg/__init__.py).

Pipeline of `wheelify`: conan (read) -> build.probe (ELF and file facts) -> plan (pure: files,
tags, rendered config) -> build (stage, patchelf, zip, repair, check, publish).
"""

"""The parity probe: what a consumer sees from a wheel against what it sees from Conan's own
CMakeDeps and PkgConfigDeps output for the same package (`etpkg parity`)."""

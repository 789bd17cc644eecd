# Sourced by the ci/ scripts: the project's venv and its own Conan home, nothing global.
ETRT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ETRT_ROOT
export CONAN_HOME="$ETRT_ROOT/.conan-home"
export PATH="$ETRT_ROOT/.venv/bin:$PATH"
export PYTHONPATH="$ETRT_ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
# Reproducible wheels and build outputs: a fixed timestamp unless the caller sets one.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-1767225600}"
# The compiler cache's settings, for the builds that ask for it (ci/build.sh, the tests' release build).
export CCACHE_CONFIGPATH="$ETRT_ROOT/ci/ccache.conf"

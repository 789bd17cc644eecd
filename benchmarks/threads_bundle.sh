#!/usr/bin/env bash
# Packs benchmarks/threads.py for a machine without network: the exported programs (run
# `threads.py --export-only` first), the etrt wheel from dist/, ONNX Runtime's wheels and the
# script, with run.sh, which installs them offline into a venv beside it and runs the sweep.
#   bash benchmarks/threads_bundle.sh [EXPORT_DIR] [OUT.tar]
# There: tar xf threads-bundle.tar && PYTHON=/path/to/python-with-torch-2.13 bash threads-bundle/run.sh [threads.py args]
# (add `--cpuid-cap cpuid_cap.so` for the pass with every system at AVX2; run.sh builds the shim)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export_dir="${1:-$root/build/threads}"
out="${2:-$root/build/threads-bundle.tar}"
[[ -f "$export_dir/manifest.json" ]] || { echo "error: $export_dir has no manifest.json: run threads.py --export-only" >&2; exit 1; }
wheels=("$root"/dist/etrt-*.whl)
[[ -f "${wheels[0]}" ]] || { echo "error: no etrt wheel in dist/: run bash ci/build.sh" >&2; exit 1; }
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
b="$stage/threads-bundle"
mkdir -p "$b/wheels" "$b/programs"
cp "$export_dir"/*.pt2 "$export_dir"/*.etrt "$export_dir"/*.onnx "$export_dir"/*.npz "$export_dir/manifest.json" "$b/programs/"
cp "${wheels[@]}" "$b/wheels/"
cp "$root/benchmarks/threads.py" "$root/benchmarks/threads-requirements.txt" "$root/tools/cpuid_cap/cpuid_cap.c" "$b/"
python3 -m pip download -q --only-binary=:all: -d "$b/wheels" onnxruntime==1.31.1 flatbuffers packaging protobuf==7.36.2 numpy
cat > "$b/run.sh" <<'RUN'
#!/usr/bin/env bash
# Offline: a venv over $PYTHON's packages (torch 2.13 for eager), etrt and ONNX Runtime from ./wheels.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${PYTHON:-python3}"
"$py" -c "import torch" || { echo "error: $py has no torch (eager needs torch 2.13): set PYTHON" >&2; exit 1; }
if [[ ! -x "$here/venv/bin/python" ]]; then
  "$py" -m venv "$here/venv"
  # $PYTHON's packages (torch) stay visible, even when $PYTHON is itself a venv's.
  host="$("$py" -c 'import site; print(site.getsitepackages()[0])')"
  echo "$host" > "$("$here/venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')/host-packages.pth"
fi
"$here/venv/bin/pip" install -q --no-index --find-links "$here/wheels" onnxruntime==1.31.1 "$here"/wheels/etrt-*.whl
# The CPUID shim for a pass with every system at AVX2 (`--cpuid-cap cpuid_cap.so`), where a C
# compiler is at hand; threads.py refuses the flag when the file is missing.
if command -v cc > /dev/null && [[ ! -f "$here/cpuid_cap.so" ]]; then
  cc -O2 -shared -fPIC "$here/cpuid_cap.c" -o "$here/cpuid_cap.so" -ldl || echo "warning: could not build cpuid_cap.so" >&2
fi
cd "$here" && exec "$here/venv/bin/python" threads.py --run-only --dir "$here/programs" "$@"
RUN
chmod +x "$b/run.sh"
tar -C "$stage" -cf "$out.tmp" threads-bundle
mv "$out.tmp" "$out"
echo "wrote $out ($(du -h "$out" | cut -f1)); on the target: tar xf $(basename "$out") && PYTHON=... bash threads-bundle/run.sh"

#!/usr/bin/env bash
# fluxjac — checks that every C++/CUDA source follows .clang-format (ctest runs it as the test 'format').
# Exit 0: formatted; 1: files to format (listed, with the command that fixes them); 77: no clang-format here
# (ctest reports the test as skipped).
#
#   bash scripts/check_format.sh            # check
#   bash scripts/check_format.sh --fix      # format in place
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
  echo "check_format: $CLANG_FORMAT not found: formatting NOT checked (Debian: apt-get install clang-format)" >&2
  exit 77
fi
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- \
  'src/*.cpp' 'src/*.hpp' 'src/*.cu' 'src/*.cuh' 'kernels/*.hpp' 'kernels/*.cuh' 'tests/*.cpp' 'tests/*.hpp' \
  'experiments/*.cu' 2>/dev/null || true)
if [[ ${#files[@]} -eq 0 ]]; then  # not a git checkout (e.g. an exported tarball): check what is there
  folders=()
  for folder in src kernels tests experiments; do [[ -d $folder ]] && folders+=("$folder"); done
  mapfile -t files < <(find "${folders[@]}" -type f \
    \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) | sort)
fi
if [[ "${1:-}" == --fix ]]; then
  "$CLANG_FORMAT" -i "${files[@]}"
  exit 0
fi
unformatted=()
for file in "${files[@]}"; do
  "$CLANG_FORMAT" --dry-run --Werror "$file" >/dev/null 2>&1 || unformatted+=("$file")
done
if [[ ${#unformatted[@]} -gt 0 ]]; then
  printf 'check_format: %d file(s) not formatted per .clang-format:\n' "${#unformatted[@]}" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  echo "fix with: bash scripts/check_format.sh --fix" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted per .clang-format ($("$CLANG_FORMAT" --version | head -1))"

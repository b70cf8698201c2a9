#!/usr/bin/env bash
# check_limits.sh — the hard limits of docs/ARCHITECTURE.md "Limits"; fails when
#   - a source folder (one holding .h/.cpp/.cu/.cuh/.py files; the data folders tests/data and tests/fuzz/corpus do
#     not count) holds more than 25 source files,
#   - a function outside kernels/ (C++, CUDA and Python in app/, python/, tools/, tests/) is longer than 80 lines
#     (from its first line to its closing one, as universal-ctags reports them),
#   - app/, kernels/, python/ or shaders/ name an issue or a session ("issue 12", "session 5") or a commit hash:
#     comments describe the code that is there; the history lives in the commit messages.
# scripts/limits_allowlist.txt lists the exceptions still being fixed; an entry that is no longer needed fails too,
# so the list only shrinks. Run from anywhere; CI runs it as the ctest `limits`.
set -uo pipefail
cd "$(dirname "$0")/.."
max_files=25
max_lines=80
allowlist=scripts/limits_allowlist.txt
command -v ctags >/dev/null || { echo "limits: universal-ctags is not installed (scripts/install-deps.sh)"; exit 1; }

# The files of the tree: tracked and new ones (not ignored) in a git checkout, else every file outside build folders.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files --cached --others --exclude-standard | while IFS= read -r f; do [ -e "$f" ] && echo "$f"; done)
else
  files=$(find . -path './build*' -prune -o -path './.git' -prune -o -type f -print | sed 's|^\./||')
fi
sources=$(grep -E '\.(h|cpp|cu|cuh|py)$' <<<"$files" | grep -vE '^tests/(data|fuzz/corpus)/')

declare -A allowed=() used=()
while read -r kind a b; do
  case $kind in ''|'#'*) continue ;; esac
  allowed["$kind $a${b:+ $b}"]=1
done <"$allowlist"

bad=0
violation() {  # violation KEY MESSAGE: fails unless KEY is allowlisted
  if [ -n "${allowed[$1]:-}" ]; then used["$1"]=1; else echo "limits: $2"; bad=1; fi
}

# Source files per folder.
while read -r count dir; do
  [ "$count" -gt $max_files ] && violation "folder $dir" "$dir holds $count source files (at most $max_files: split it by concept)"
done < <(sed -E 's|/[^/]*$||' <<<"$sources" | sort | uniq -c)

# Functions longer than the limit (kernels/ excluded: a fused kernel is one function by design).
mapfile -t scanned < <(grep -E '^(app|python|tools|tests)/' <<<"$sources")
while read -r end start name path; do
  lines=$((end - start + 1))
  [ "$lines" -gt $max_lines ] &&
    violation "function $path $name" "$path:$start: $name is $lines lines (at most $max_lines: split it)"
done < <(ctags --languages=C++,CUDA,Python --kinds-C++=f --kinds-CUDA=f --kinds-Python=fm --fields=+ne -x \
           --_xformat="%{end} %n %N %F" "${scanned[@]}" 2>/dev/null)

# History in the code: issue and session numbers, commit hashes (7 to 40 hex digits with a letter and a digit).
history=$(git grep --untracked -nIP '[Ii]ssues? #?[0-9]+|[Ss]essions? [0-9]+|(?<![0-9A-Za-z_.])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![0-9A-Za-z_])' \
            -- app kernels python shaders 2>/dev/null | head -5)
if [ -n "$history" ]; then
  echo "limits: issue or session numbers or commit hashes in the code (put the history in the commit message):"
  echo "$history"; bad=1
fi

for key in "${!allowed[@]}"; do
  [ -z "${used[$key]:-}" ] && { echo "limits: $allowlist: '$key' is within the limits now: remove the entry"; bad=1; }
done
[ $bad -eq 0 ] && echo "limits: every folder, function and comment is within the limits (${#allowed[@]} allowlisted)"
exit $bad

#!/usr/bin/env bash
# Draws every report plots/reports.txt lists from the committed results (figures, report.md, report.html): one
# command, so that no figure needs committing. The sweeps come out of each results folder's raw.tar.xz (or lie loose
# beside it) into a temporary folder; the reports go to plots/<name>/ (git-ignored, except plots/showcase/).
#   plots/make_reports.sh [NAME ...]      (default: every report; BATCHSCOPE=path/to/batchscope)
set -euo pipefail
cd "$(dirname "$0")/.."
bs=${BATCHSCOPE:-build/app/batchscope}
[ -x "$bs" ] || scripts/build.sh
want=" $* "
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
while IFS=$'\t' read -r name folder csvs; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  [[ $# -gt 0 && "$want" != *" $name "* ]] && continue
  src="$tmp/$name"
  mkdir -p "$src"
  args=()
  for c in $csvs; do
    base=${c%.csv}
    for f in "$c" "$base.layers.csv" "$base.json"; do
      if [ -f "$folder/$f" ]; then cp "$folder/$f" "$src/"
      else tar -xJf "$folder/raw.tar.xz" -C "$src" "$f"
      fi
    done
    args+=("$src/$c")
  done
  echo "make_reports: $name <- $folder (${#args[@]} sweeps)" >&2
  "$bs" report "${args[@]}" --out "plots/$name"
done <plots/reports.txt

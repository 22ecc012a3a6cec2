#!/usr/bin/env python3
"""Packs an experiment's raw per-run files into one compressed archive, keeping what its write-up cites.

Usage: experiments/pack_raw.py experiments/results/NAME [...]

In each folder, every tracked file that no write-up names (experiments/*.md, README.md, the folder's own README.md) goes
into NAME/raw.tar.xz (merged with an archive already there), and leaves git's index and the working tree. The
summary tables and the files a write-up cites stay as they are. `tar -xJf NAME/raw.tar.xz -C NAME` brings the raw
files back; plots/make_reports.sh reads the sweeps it draws straight from the archives.
"""
import glob
import io
import os
import subprocess
import sys
import tarfile


def cited_names(folder):
    texts = []
    for p in glob.glob("experiments/*.md") + ["README.md", os.path.join(folder, "README.md")]:
        if os.path.exists(p):
            with open(p, encoding="utf-8", errors="replace") as f:
                texts.append(f.read())
    blob = "\n".join(texts)
    return lambda name: name in blob


def tracked(folder):
    out = subprocess.run(["git", "ls-files", "-z", folder], check=True, capture_output=True).stdout.decode()
    return [p for p in out.split("\0") if p]


def pack(folder):
    folder = folder.rstrip("/")
    cited = cited_names(folder)
    archive = os.path.join(folder, "raw.tar.xz")
    keep = {"README.md", "raw.tar.xz"}
    files = [p for p in tracked(folder) if os.path.basename(p) not in keep and not cited(os.path.basename(p))]
    if not files:
        print(f"{folder}: nothing to pack")
        return
    members = {}
    if os.path.exists(archive):
        with tarfile.open(archive, "r:xz") as t:
            for m in t.getmembers():
                if m.isfile():
                    members[m.name] = t.extractfile(m).read()
    for p in files:
        with open(p, "rb") as f:
            members[os.path.relpath(p, folder)] = f.read()
    tmp = archive + ".tmp"
    with tarfile.open(tmp, "w:xz", preset=9) as t:
        for name in sorted(members):
            info = tarfile.TarInfo(name)
            info.size = len(members[name])
            info.mtime = 0
            t.addfile(info, io.BytesIO(members[name]))
    os.replace(tmp, archive)
    subprocess.run(["git", "rm", "-q", "--"] + files, check=True)
    subprocess.run(["git", "add", archive], check=True)
    print(f"{folder}: packed {len(files)} files into {archive} ({os.path.getsize(archive) // 1024} KiB)")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for d in sys.argv[1:]:
        pack(d)

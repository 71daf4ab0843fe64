"""Packs installed distributions back into wheels, optionally with edits to their files.

A modified build of a released server, made offline from its installed venv: the tests
install such a wheel as a candidate, and the injected-cost experiments give one function a
known extra CPU cost. Each wheel holds the distribution's files and metadata as listed in
its RECORD; the RECORD written carries no hashes, which pip accepts for a local wheel.

  python3 scripts/repack-wheels.py SITE_PACKAGES OUT_DIR [--only matrix_synapse] [--edits EDITS.json]

EDITS.json is a list of edits, each to one file inside the wheel:
  {"file": "synapse/rest/client/room.py",
   "before": "text found exactly once",  "insert": "text put just before it",
   "append": "text added at the end"}
"before"/"insert" and "append" are each optional; an edit whose "before" is not found
exactly once, or whose file no wheel holds, stops the script.
"""
import argparse
import csv
import json
import os
import sys
import zipfile

METADATA = ('METADATA', 'WHEEL', 'entry_points.txt', 'top_level.txt')


def wheel_tag(meta):
    tags = [l.split(':', 1)[1].strip().split('-') for l in open(os.path.join(meta, 'WHEEL')) if l.startswith('Tag:')]
    # A wheel for several tags names them compressed (PEP 425): py2.py3-none-any.
    return '-'.join('.'.join(dict.fromkeys(t[i] for t in tags)) for i in range(3))


def listed_files(meta, info):
    files = []
    with open(os.path.join(meta, 'RECORD')) as f:
        for row in csv.reader(f):
            p = row[0]
            if p.startswith('..') or '__pycache__' in p or p.startswith(info + '/'):
                continue
            files.append(p)
    return files + [info + '/' + m for m in METADATA if os.path.exists(os.path.join(meta, m))]


def apply_edit(path, data, edit, source):
    if 'before' in edit:
        marker = edit['before'].encode()
        found = data.count(marker)
        if found != 1:
            sys.exit('%s: "before" text found %d times in %s; it must occur exactly once' % (source, found, path))
        data = data.replace(marker, edit.get('insert', '').encode() + marker)
    return data + edit.get('append', '').encode()


def repack(site, out, info, edits, source, applied):
    meta = os.path.join(site, info)
    name, version = info[:-len('.dist-info')].rsplit('-', 1)
    files = listed_files(meta, info)
    whl = os.path.join(out, '%s-%s-%s.whl' % (name.replace('-', '_'), version, wheel_tag(meta)))
    with zipfile.ZipFile(whl, 'w', zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for p in files:
            full = os.path.join(site, p)
            if not os.path.isfile(full):
                continue
            data = open(full, 'rb').read()
            for edit in (e for e in edits if e['file'] == p):
                data = apply_edit(p, data, edit, source)
                applied.add(p)
            z.writestr(p, data)
        z.writestr(info + '/RECORD', ''.join('%s,,\n' % p for p in files + [info + '/RECORD']))
    return whl


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('site', help='the site-packages directory of the installed venv')
    parser.add_argument('out', help='the directory the wheels are written to')
    parser.add_argument('--only', help='pack only this distribution (its dist-info name, e.g. matrix_synapse)')
    parser.add_argument('--edits', help='a JSON file of edits to make (see above)')
    args = parser.parse_args()
    source = args.edits or 'edits'
    edits = json.load(open(args.edits)) if args.edits else []
    infos = sorted(i for i in os.listdir(args.site) if i.endswith('.dist-info'))
    if args.only:
        infos = [i for i in infos if i[:-len('.dist-info')].rsplit('-', 1)[0] == args.only]
        if not infos:
            sys.exit('--only %s: no such distribution in %s' % (args.only, args.site))
    os.makedirs(args.out, exist_ok=True)
    applied = set()
    for info in infos:
        print(repack(args.site, args.out, info, edits, source, applied))
    missing = {e['file'] for e in edits} - applied
    if missing:
        sys.exit('%s: no wheel holds %s' % (source, ', '.join(sorted(missing))))


if __name__ == '__main__':
    main()

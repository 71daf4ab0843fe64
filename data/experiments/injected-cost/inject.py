# Packs the cached Synapse 1.163.2 back into a wheel with a known extra CPU cost in one
# function: RoomMessageListRestServlet.on_GET calls _loadgate_injected_cost (a 15 ms busy loop).
import csv, os, sys, zipfile
site, out = sys.argv[1], sys.argv[2]
info = 'matrix_synapse-1.163.2.dist-info'
meta = os.path.join(site, info)
tags = [l.split(':', 1)[1].strip().split('-') for l in open(os.path.join(meta, 'WHEEL')) if l.startswith('Tag:')]
tag = '-'.join('.'.join(dict.fromkeys(t[i] for t in tags)) for i in range(3))
files = []
with open(os.path.join(meta, 'RECORD')) as f:
    for row in csv.reader(f):
        p = row[0]
        if p.startswith('..') or '__pycache__' in p or p.startswith(info + '/'):
            continue
        files.append(p)
files += [info + '/' + m for m in ('METADATA', 'WHEEL', 'entry_points.txt', 'top_level.txt') if os.path.exists(os.path.join(meta, m))]
whl = os.path.join(out, 'matrix_synapse-1.163.2-%s.whl' % tag)
INJECT = b'''

def _loadgate_injected_cost() -> None:
    import time
    start = time.perf_counter()
    total = 0
    while time.perf_counter() - start < 0.015:
        total += 1
'''
with zipfile.ZipFile(whl, 'w', zipfile.ZIP_DEFLATED, compresslevel=1) as z:
    for p in files:
        full = os.path.join(site, p)
        if not os.path.isfile(full):
            continue
        data = open(full, 'rb').read()
        if p == 'synapse/rest/client/room.py':
            marker = b'        processing_start_time = self.clock.time_msec()\n        # Fire off and hope'
            assert data.count(marker) == 1
            data = data.replace(marker, b'        _loadgate_injected_cost()\n' + marker) + INJECT
        z.writestr(p, data)
    z.writestr(info + '/RECORD', ''.join('%s,,\n' % p for p in files + [info + '/RECORD']))
print(whl)

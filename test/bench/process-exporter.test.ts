import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseProc, renderMetrics, startProcessExporter } from '../../src/bench/local/process-exporter.ts';
import { allocatePort } from '../../src/util/ports.ts';

const STATUS = 'Name:\tpython\nState:\tS (sleeping)\nVmRSS:\t  204800 kB\nThreads:\t17\n';

test('parseProc reads CPU ticks after a process name holding spaces and parentheses', () => {
  // Fields after comm: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
  const stat = '4242 (python (synapse) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 17 0 1 2 3';
  assert.deepEqual(parseProc(stat, STATUS, 100), { threads: 17, residentBytes: 204800 * 1024, cpuSeconds: 3 });
  assert.throws(() => parseProc('1 (x) S', STATUS, 100), /unexpected \/proc format/);
});

test('the exporter serves up 0 without a PID and the live process numbers with one', async () => {
  assert.equal(renderMetrics(undefined).trim().split('\n').pop(), 'loadgate_target_up 0');
  const port = await allocatePort();
  const exporter = await startProcessExporter(port);
  try {
    let text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(text, /^loadgate_target_up 0$/m);
    exporter.setPid(process.pid);
    text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(text, /^loadgate_target_up 1$/m);
    const threads = Number(/^loadgate_target_threads (\d+)$/m.exec(text)?.[1]);
    const rss = Number(/^loadgate_target_resident_memory_bytes (\d+)$/m.exec(text)?.[1]);
    assert.ok(threads >= 1, `threads ${threads}`);
    assert.ok(rss > 10 * 1024 * 1024 && rss <= process.memoryUsage().rss * 2, `rss ${rss}`);
    assert.match(text, /^loadgate_target_cpu_seconds_total \d+(\.\d+)?$/m);
    exporter.setPid(2 ** 22 + 12345); // no such process: reported as down, not as an error
    text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(text, /^loadgate_target_up 0$/m);
  } finally {
    await exporter.close();
  }
});

test('group CPU sums the target process groups and never drops when a process exits', async () => {
  const { spawn } = await import('node:child_process');
  // A busy child in its own process group, like a bench component.
  const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 600; while (Date.now() < end);'], { detached: true, stdio: 'ignore' });
  const port = await allocatePort();
  const exporter = await startProcessExporter(port);
  const read = async () => Number(/^loadgate_target_group_cpu_seconds_total (\S+)$/m.exec(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())?.[1]);
  try {
    exporter.addGroup(child.pid!);
    const first = await read();
    await new Promise((r) => setTimeout(r, 400));
    const during = await read();
    assert.ok(during >= first, `${during} >= ${first}`);
    await new Promise((r) => child.once('exit', r));
    const after = await read();
    assert.ok(after >= during && after > 0.05, `CPU of the exited busy child is kept: ${after}`);
  } finally {
    child.kill();
    await exporter.close();
  }
});

// SPDX-License-Identifier: MIT
// Node.js on the pthread locks: libuv's thread pool (its queue is a
// pthread mutex and condition variables) running crypto, zlib and file
// work, and worker threads (V8's platform uses pthread mutexes, condition
// variables and rwlocks) sharing memory with Atomics.  The output is the
// same on every run; a broken invariant exits 1.
'use strict';
const crypto = require('crypto');
const zlib = require('zlib');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');

if (!isMainThread) {
  // A worker: add 1 to the shared counter `rounds` times under a spin
  // lock made of Atomics, and count its own adds in its own slot.
  const { sab, id, rounds } = workerData;
  const a = new Int32Array(sab);
  for (let i = 0; i < rounds; i++) {
    while (Atomics.compareExchange(a, 0, 0, 1) !== 0) Atomics.wait(a, 0, 1, 1);
    a[1] = a[1] + 1; // plain read-modify-write inside the lock
    Atomics.store(a, 0, 0);
    Atomics.notify(a, 0, 1);
    a[2 + id]++;
  }
  parentPort.postMessage({ id, sum: a[2 + id] });
  return;
}

let fail = false;
const check = (ok, what) => { if (!ok) { console.log(`FAIL ${what}`); fail = true; } };
const sha = (b) => crypto.createHash('sha256').update(b).digest('hex').slice(0, 16);

async function pool() {
  // 1. Thread-pool work: 64 pbkdf2, 64 deflate/inflate, 64 file writes
  // and reads, all at once on the pool's threads.
  const n = 64;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qlock-peers-'));
  const jobs = [];
  for (let i = 0; i < n; i++) {
    const data = Buffer.from(`block ${i} `.repeat(2000 + i));
    jobs.push(new Promise((res, rej) => crypto.pbkdf2(`pw${i}`, 'salt', 2000, 32, 'sha256',
      (e, k) => (e ? rej(e) : res(`k${i}:${k.toString('hex').slice(0, 8)}`)))));
    jobs.push(new Promise((res, rej) => zlib.deflate(data, (e, z) => {
      if (e) return rej(e);
      zlib.inflate(z, (e2, back) => (e2 ? rej(e2) : res(`z${i}:${z.length}:${back.equals(data)}`)));
    })));
    const f = path.join(dir, `f${i}`);
    jobs.push(fs.promises.writeFile(f, data).then(() => fs.promises.readFile(f))
      .then((b) => `f${i}:${b.equals(data)}`));
  }
  const out = await Promise.all(jobs);
  fs.rmSync(dir, { recursive: true });
  check(out.every((s) => !s.endsWith(':false')), 'pool: a round trip differs');
  console.log(`pool: ${out.length} jobs, digest ${sha(out.join(','))}`);
}

async function workers() {
  // 2. Four worker threads on one SharedArrayBuffer.
  const nw = 4;
  const rounds = 20000;
  const sab = new SharedArrayBuffer(4 * (2 + nw));
  const done = await Promise.all(Array.from({ length: nw }, (_, id) => new Promise((res, rej) => {
    const w = new Worker(__filename, { workerData: { sab, id, rounds } });
    w.on('message', res);
    w.on('error', rej);
  })));
  const a = new Int32Array(sab);
  check(a[1] === nw * rounds, `workers: counter ${a[1]}, want ${nw * rounds}`);
  check(done.every((m) => m.sum === rounds), 'workers: a worker lost adds');
  console.log(`workers: ${nw} x ${rounds}, total ${a[1]}`);
}

pool().then(workers).then(() => process.exit(fail ? 1 : 0),
  (e) => { console.log(`FAIL ${e}`); process.exit(1); });

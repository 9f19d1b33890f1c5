# SPDX-License-Identifier: MIT
"""CPython threads workloads for bench/apps (docs/bench-apps.md).
  py_threads.py queue [ITEMS]   4 producers, 4 consumers on one queue.Queue
                                (maxsize 64); ITEMS per producer
  py_threads.py lock [ITERS]    8 threads each incrementing a shared counter
                                ITERS times under one threading.Lock
Prints the work done and a checksum that does not depend on timing, then
the elapsed time and the operations per second.  CPython's threads meet on
the GIL (a pthread mutex and condition variable) and, for queue.Queue, on
threading.Condition; what the drop-in changes is those pthread objects.
"""
import queue
import sys
import threading
import time


def run_queue(items):
    q = queue.Queue(maxsize=64)
    sums = [0] * 4
    done = object()

    def produce(p):
        for i in range(items):
            q.put(p * items + i)

    def consume(c):
        s = 0
        while True:
            x = q.get()
            if x is done:
                break
            s += x
        sums[c] = s

    prods = [threading.Thread(target=produce, args=(p,)) for p in range(4)]
    cons = [threading.Thread(target=consume, args=(c,)) for c in range(4)]
    t0 = time.monotonic()
    for t in cons + prods:
        t.start()
    for t in prods:
        t.join()
    for _ in cons:
        q.put(done)
    for t in cons:
        t.join()
    elapsed = time.monotonic() - t0
    n = 4 * items
    print("queue: 4 producers, 4 consumers, %d items, checksum %d"
          % (n, sum(sums)))
    return n, elapsed


def run_lock(iters):
    lock = threading.Lock()
    box = [0]

    def work():
        for _ in range(iters):
            with lock:
                box[0] += 1

    ts = [threading.Thread(target=work) for _ in range(8)]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    elapsed = time.monotonic() - t0
    print("lock: 8 threads, %d increments each, counter %d" % (iters, box[0]))
    return 8 * iters, elapsed


def main(argv):
    mode = argv[1] if len(argv) > 1 else "queue"
    if mode == "queue":
        n, el = run_queue(int(argv[2]) if len(argv) > 2 else 50000)
    elif mode == "lock":
        n, el = run_lock(int(argv[2]) if len(argv) > 2 else 200000)
    else:
        print("usage: py_threads.py queue|lock [COUNT]", file=sys.stderr)
        return 2
    print("elapsed: %.6f s" % el)
    print("ops/s: %.0f" % (n / el))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

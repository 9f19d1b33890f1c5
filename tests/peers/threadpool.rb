# SPDX-License-Identifier: MIT
# A Ruby thread pool on the pthread locks (the interpreter's global VM
# lock and its thread wake-ups are pthread mutexes and condition
# variables): a SizedQueue of work, a Queue of results, a Mutex and a
# ConditionVariable for a strict-turn relay, and threads blocked in
# pipes and sleeps.  The output is the same on every run; a broken
# invariant exits 1.
require 'digest'
Digest::SHA256.hexdigest('') # loaded here: its lazy load races in threads

$fail = false
def check(ok, what)
  return if ok
  puts "FAIL #{what}"
  $fail = true
end

# 1. A pool: 6 workers take work from a bounded queue, hash it, return it.
workers = 6
items = 3000
work = SizedQueue.new(16)
results = Queue.new
count = 0
lock = Mutex.new
pool = Array.new(workers) do
  Thread.new do
    done = 0
    while (n = work.pop)
      results << [n, Digest::SHA256.hexdigest("item #{n}")[0, 8]]
      lock.synchronize { count += 1 }
      done += 1
    end
    done
  end
end
items.times { |i| work << i }
workers.times { work << nil }
total = pool.sum(&:value)
got = Array.new(results.size) { results.pop }.sort
check(total == items && count == items && got.size == items, "pool: #{total} #{count} #{got.size}")
check(got.map(&:first) == (0...items).to_a, 'pool: every item once')
puts "pool: #{workers} workers, #{items} items, digest #{Digest::SHA256.hexdigest(got.flatten.join(','))[0, 16]}"

# 2. Strict turns with a Mutex and a ConditionVariable.
n = 4
steps = 800
turn = 0
log = []
m = Mutex.new
cv = ConditionVariable.new
turners = Array.new(n) do |me|
  Thread.new do
    (steps / n).times do
      m.synchronize do
        cv.wait(m) until turn % n == me
        log << me
        turn += 1
        cv.broadcast
      end
    end
  end
end
turners.each(&:join)
check(log.size == steps && log.each_with_index.all? { |v, i| v == i % n }, 'turns: out of order')
puts "turns: #{n} threads, #{log.size} steps in order"

# 3. Threads blocked outside the interpreter lock: pipes and sleeps.
pipes = Array.new(4) { IO.pipe }
readers = pipes.map.with_index do |(r, _w), i|
  Thread.new { s = 0; while (line = r.gets); s += line.to_i; end; [i, s] }
end
pipes.each_with_index do |(_r, w), i|
  200.times { |k| w.puts(k * (i + 1)) }
  w.close
end
sums = readers.map(&:value).sort
check(sums == (0...4).map { |i| [i, 19_900 * (i + 1)] }, "pipes: #{sums.inspect}")
sleepers = Array.new(8) { |i| Thread.new { sleep 0.01 * (i % 3); i * i } }
check(sleepers.map(&:value).sum == 140, 'sleepers')
puts "pipes: #{sums.map(&:last).join(' ')}"

exit($fail ? 1 : 0)

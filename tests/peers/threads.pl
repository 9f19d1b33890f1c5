#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# Perl ithreads on the pthread locks: threads::shared locks (a pthread
# mutex and condition variable each), Thread::Queue and Thread::Semaphore
# (cond_wait/cond_signal), a cond_wait ping-pong in strict turns.  The
# output is the same on every run and under every lock; a broken
# invariant exits 1.
use strict;
use warnings;
use threads;
use threads::shared;
use Thread::Queue;
use Thread::Semaphore;

my $workers = 4;
my $items   = 4000;
my $fail    = 0;
sub check { my ($ok, $what) = @_; unless ($ok) { print "FAIL $what\n"; $fail = 1; } }

# 1. A pool: work items through one queue, results through another; a
# shared counter and a shared hash updated under lock.
my $work    = Thread::Queue->new();
my $results = Thread::Queue->new();
my $count :shared = 0;
my %by_worker :shared;
my @pool = map {
	my $id = $_;
	threads->create(sub {
		my $done = 0;
		while (defined(my $n = $work->dequeue())) {
			my $v = ($n * $n + 7 * $n) % 1009;
			$results->enqueue("$n $v");
			{ lock($count); $count++; }
			$done++;
		}
		lock(%by_worker);
		$by_worker{$id} = $done;
		return $done;
	});
} 1 .. $workers;
$work->enqueue($_) for 1 .. $items;
$work->end();
my $total = 0;
$total += $_->join() for @pool;
$results->end();
my ($sum, $seen) = (0, 0);
my %got;
while (defined(my $r = $results->dequeue())) {
	my ($n, $v) = split / /, $r;
	$got{$n}++;
	$sum += $v;
	$seen++;
}
check($total == $items, "pool: workers did $total of $items");
check($count == $items, "pool: counter $count, want $items");
check($seen == $items && keys(%got) == $items, "pool: $seen results, " . keys(%got) . " distinct");
my $by = 0;
$by += $by_worker{$_} for keys %by_worker;
check($by == $items, "pool: per-worker counts add to $by");
print "pool: $workers workers, $items items, sum $sum\n";

# 2. Mutual exclusion: non-atomic read-modify-write of two shared
# scalars under one lock; they must stay equal.
my ($a, $b) :shared = (0, 0);
my $rounds = 3000;
my @inc = map {
	threads->create(sub {
		my $bad = 0;
		for (1 .. $rounds) {
			lock($a);
			my $t = $a;
			$bad++ if $t != $b;
			$a = $t + 1;
			$b = $t + 1;
		}
		return $bad;
	});
} 1 .. $workers;
my $bad = 0;
$bad += $_->join() for @inc;
check($bad == 0 && $a == $workers * $rounds && $b == $a, "exclusion: a=$a b=$b torn=$bad");
print "exclusion: $workers threads x $rounds, total $a\n";

# 3. Strict turns with cond_wait/cond_broadcast: thread i may write only
# when turn % n == i; the log must be 0,1,2,...
my $turn :shared = 0;
my @log :shared;
my $n = 3;
my $steps = 600;
my @turners = map {
	my $me = $_;
	threads->create(sub {
		for (1 .. $steps / $n) {
			lock($turn);
			cond_wait($turn) until $turn % $n == $me;
			push @log, $me;
			$turn++;
			cond_broadcast($turn);
		}
	});
} 0 .. $n - 1;
$_->join() for @turners;
my $order = 1;
for my $i (0 .. $#log) { $order = 0 if $log[$i] != $i % $n; }
check($order && @log == $steps, "turns: " . scalar(@log) . " steps, in order: $order");
print "turns: $n threads, $steps steps in order\n";

# 4. A counting semaphore bounds the threads inside: never more than 2.
my $sem = Thread::Semaphore->new(2);
my $inside :shared = 0;
my $peak :shared = 0;
my @sem = map {
	threads->create(sub {
		for (1 .. 200) {
			$sem->down();
			{ lock($inside); $inside++; $peak = $inside if $inside > $peak; }
			threads->yield();
			{ lock($inside); $inside--; }
			$sem->up();
		}
	});
} 1 .. $workers;
$_->join() for @sem;
check($peak >= 1 && $peak <= 2 && $inside == 0, "semaphore: peak $peak inside $inside");
print "semaphore: at most 2 inside\n";

exit $fail;

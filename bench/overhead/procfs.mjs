// Reads a process's CPU time and resident memory from /proc (Linux only).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond;

/** Clock ticks per second for /proc/PID/stat's utime and stime (getconf CLK_TCK, usually 100). */
export function clockTicks() {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** Whether this kernel keeps per-thread scheduler times (/proc/PID/task/TID/schedstat). */
export const EXACT_CPU = existsSync('/proc/self/schedstat');

/**
 * CPU time of a process so far, in milliseconds: its live threads' exact on-CPU time (schedNs)
 * where the kernel keeps it, else utime + stime (one clock tick of resolution, 10 ms at 100 Hz,
 * which makes a per-request figure over a few thousand requests move by a fifth between runs).
 */
export function cpuMs(pid) {
  return EXACT_CPU ? schedNs(pid).onCpu / 1e6 : tickCpuMs(pid);
}

/** utime + stime of a process so far, in milliseconds (resolution: one clock tick). */
function tickCpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: split after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime is field 14, stime field 15.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / clockTicks();
}

/**
 * Time on a CPU and time runnable but waiting for one, summed over a process's threads, in
 * nanoseconds (/proc/PID/task/TID/schedstat; exact, unlike utime+stime's ticks). Threads that
 * exited since are not counted.
 */
export function schedNs(pid) {
  let onCpu = 0;
  let waiting = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      onCpu += run;
      waiting += wait;
    } catch {
      // the thread exited while the list was read
    }
  }
  return { onCpu, waiting };
}

/** VmRSS of a process in kB. */
export function rssKb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return match ? Number(match[1]) : Number.NaN;
}

/** The soft limit on open files of this process (its children inherit it). */
export function openFileLimit() {
  try {
    const limits = readFileSync('/proc/self/limits', 'utf8');
    const match = /^Max open files\s+(\S+)/m.exec(limits);
    return match ? (match[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(match[1])) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Busy CPU time of the whole machine so far (all CPUs, not idle or iowait), in milliseconds. */
export function systemBusyMs() {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  const [, ...ticks] = line.trim().split(/\s+/).map(Number);
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0); // user nice system idle iowait irq softirq steal
  return ((total - ticks[3] - ticks[4]) * 1000) / clockTicks();
}

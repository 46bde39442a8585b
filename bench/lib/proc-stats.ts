/** Readings of another process from /proc (Linux): CPU time and peak resident memory. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`, 100 on Linux). */
function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    const text = execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim();
    const value = Number(text);
    ticksPerSecond = Number.isInteger(value) && value > 0 ? value : 100;
  }
  return ticksPerSecond;
}

/** CPU seconds (user + system, every thread) the process has used so far. */
export function readCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // the command name (field 2) is in parentheses and may hold spaces: count fields after its end
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`unreadable /proc/${pid}/stat`);
  return (utime + stime) / clockTicksPerSecond();
}

/** The process and every process below it (its children's `/proc/<pid>/task/<tid>/children`, recursively). */
export function processTree(pid: number): number[] {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pids[i]}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        pids.push(...readFileSync(`/proc/${pids[i]}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
      } catch {
        // the task ended meanwhile
      }
    }
  }
  return pids;
}

/** CPU seconds of a process and every process below it that is alive now (media workers, say). */
export function readTreeCpuSeconds(pid: number): number {
  let total = 0;
  for (const each of processTree(pid)) {
    try {
      total += readCpuSeconds(each);
    } catch {
      // it ended between the listing and the reading
    }
  }
  return total;
}

/** Peak resident set size (VmHWM) of the process so far, in bytes. */
export function readPeakRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/**
 * Resets the process's peak RSS to its current RSS (`echo 5 > /proc/<pid>/clear_refs`), so that
 * a later VmHWM is the peak of what ran in between. False when the kernel refuses.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

// Process liveness that survives PID reuse: a pid is "ours" only if its start time still matches.
import { readdirSync, readFileSync } from 'node:fs';

/** Start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined. */
export function processStartTime(pid: number): { start: number; zombie: boolean } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: split after its closing paren.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { start: Number(fields[19]), zombie: fields[0] === 'Z' || fields[0] === 'X' };
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number, startTime: number | undefined): boolean {
  const p = processStartTime(pid);
  if (!p || p.zombie) return false;
  return startTime === undefined || p.start === startTime;
}

/** Signals a whole process group; missing groups are fine. */
export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
}

/**
 * Whether any live (not zombie) process is in process group `pgid` (Linux /proc). Linux keeps a pid
 * from being reused while a group of that id has members, so this is the group that was started.
 */
export function groupAlive(pgid: number): boolean {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return false;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

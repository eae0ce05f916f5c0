// CPU time of processes from Linux's /proc: utime + stime of a process (all its threads) and of its
// live descendants, in milliseconds.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

type Stat = { pid: number; ppid: number; ticks: number };

/** Fields after the command name, which is in parentheses and may hold spaces. */
function stat(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // f[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
    return { pid, ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
  } catch {
    return undefined;
  }
}

export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

export const alive = (pid: number) => stat(pid) !== undefined;

/** Every live process below `pid` (not `pid` itself). */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(Number(name));
    if (!s) continue;
    const list = children.get(s.ppid) ?? [];
    list.push(s.pid);
    children.set(s.ppid, list);
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** CPU milliseconds the processes have used so far (each counted once; gone ones count 0). */
export function cpuMs(pids: Iterable<number>): number {
  let ticks = 0;
  for (const pid of new Set(pids)) ticks += stat(pid)?.ticks ?? 0;
  return (ticks * 1000) / TICKS_PER_SECOND;
}

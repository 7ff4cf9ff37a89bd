// Durations in specs are either seconds (number) or Go/Argo-style strings: "90s", "5m", "1h30m", "2d".
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;

/** Parses a duration to milliseconds; returns undefined when the text is not a duration. */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value * 1000 : undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let m = PART.exec(text); m; m = PART.exec(text)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    consumed = PART.lastIndex;
  }
  return consumed > 0 && consumed === text.length ? total : undefined;
}

export function durationMs(value: string | number): number {
  const ms = parseDuration(value);
  if (ms === undefined) throw new Error(`not a duration: ${JSON.stringify(value)}`);
  return ms;
}

/** Slurm's --time format (D-HH:MM:SS), rounded up to whole minutes as Slurm does. */
export function slurmTime(ms: number): string {
  const totalMin = Math.max(1, Math.ceil(ms / 60_000));
  const d = Math.floor(totalMin / 1440);
  const h = Math.floor((totalMin % 1440) / 60);
  const m = totalMin % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d}-${pad(h)}:${pad(m)}:00`;
}

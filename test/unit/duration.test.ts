// The unit lane's smallest member: durations as specs write them (no server needed).
import { parseDuration, slurmTime } from '../../contract/duration.js';

test('Go/Argo-style durations and seconds', () => {
  expect(parseDuration('1h30m')).toBe(5_400_000);
  expect(parseDuration(90)).toBe(90_000);
  expect(parseDuration('90')).toBe(90_000);
  expect(parseDuration('5 minutes')).toBeUndefined();
  expect(parseDuration(-1)).toBeUndefined();
});

test('Slurm --time rounds up to whole minutes', () => {
  expect(slurmTime(61_000)).toBe('0-00:02:00');
});

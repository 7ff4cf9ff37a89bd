// `tandem doctor` counts live workers only: the server lists the pollers of the last minutes, exited
// workers too, with their last access time.
import { LIVE_POLLER_MS, livePollers } from '../../../cli/doctor.js';

test('only pollers whose last access is within the window count as live workers', () => {
  const now = Date.parse('2026-12-02T12:00:00Z');
  const at = (agoMs: number) => ({ seconds: String(Math.floor((now - agoMs) / 1000)), nanos: 0 });
  const pollers = [
    { identity: 'live@host', lastAccessTime: at(5_000) },
    { identity: 'exited@host', lastAccessTime: at(4 * 60_000) },
    { identity: 'edge@host', lastAccessTime: at(LIVE_POLLER_MS) },
    { identity: 'unknown@host', lastAccessTime: null },
  ];
  expect(livePollers(pollers, now).map((p) => p.identity)).toEqual(['live@host', 'edge@host']);
  expect(livePollers(pollers, now + 10 * 60_000)).toEqual([]);
});

// DAG planning of the Argo interpreter (workflows/argo/dag.ts): dependencies, targets, handled failures.
import { failureHandled, neededBy, taskDepends, wantedTasks } from '../../../workflows/argo/dag.js';

const tasks = [
  { name: 'A' },
  { name: 'B', dependencies: ['A'] },
  { name: 'C', depends: 'A && (B.Failed || !B.Succeeded)' },
  { name: 'D', depends: 'C' },
  { name: 'E' },
];

test('dependencies from depends or dependencies, deduplicated', () => {
  const deps = taskDepends(tasks);
  expect(deps.get('A')).toBeUndefined();
  expect(neededBy(deps, 'B')).toEqual(['A']);
  expect(neededBy(deps, 'C')).toEqual(['A', 'B']);
  expect(neededBy(deps, 'missing')).toEqual([]);
});

test('a target runs only the named tasks and what they need', () => {
  const deps = taskDepends(tasks);
  expect([...wantedTasks(tasks, deps, '')]).toEqual(['A', 'B', 'C', 'D', 'E']);
  expect([...wantedTasks(tasks, deps, '  ')]).toHaveLength(5);
  expect([...wantedTasks(tasks, deps, 'D')].sort()).toEqual(['A', 'B', 'C', 'D']);
  expect([...wantedTasks(tasks, deps, 'B E')].sort()).toEqual(['A', 'B', 'E']);
});

test('a failure is handled when a depends names it explicitly', () => {
  expect(failureHandled(tasks, 'B')).toBe(true);
  expect(failureHandled(tasks, 'A')).toBe(false);
  expect(failureHandled(tasks, 'C')).toBe(false);
  expect(failureHandled([{ name: 'x', depends: 'my-task.Errored' }], 'task')).toBe(false);
  expect(failureHandled([{ name: 'x', depends: 'loop.AllFailed' }], 'loop')).toBe(true);
});

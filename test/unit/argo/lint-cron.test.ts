// CronWorkflow schedules as Argo v3.7.9 validates them: the single `schedule` of v3.x (the shipped v4
// schema requires `schedules`, so the form Argo's docs showed for years was refused), not both, and
// each a cron expression robfig/cron's ParseStandard takes.
import { lintText } from '../../../argo/lint/validate.js';
import { cronProblem } from '../../../argo/lang/cron.js';

const cron = (schedule: string) => `apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: nightly}
spec:
${schedule}
  concurrencyPolicy: Replace
  workflowSpec:
    entrypoint: main
    templates:
    - name: main
      container: {image: alpine, command: [echo, hi]}
`;
const issues = (text: string) => lintText(text, 'cron.yaml').issues.map(({ line, path, message }) => ({ line, path, message }));

test('schedule (v3.x) and schedules (v3.6+) both lint; both at once, neither, or a malformed one is an issue at its line', () => {
  expect(issues(cron('  schedule: "*/5 * * * *"'))).toEqual([]);
  expect(issues(cron('  schedules: ["0 2 * * *", "@hourly"]'))).toEqual([]);
  expect(issues(cron('  schedule: "0 2 * * *"\n  schedules: ["0 3 * * *"]'))).toEqual([{ line: 5, path: 'spec.schedule', message: 'only one of schedule or schedules may be set (schedule is the single form of Argo v3.x)' }]);
  expect(issues(cron('  timezone: UTC'))).toEqual([{ line: 4, path: 'spec', message: "a CronWorkflow needs schedules (a list of cron expressions) or, as in Argo v3.x, schedule" }]);
  expect(issues(cron('  schedules: ["0 2 * * *", "0 25 * * *"]'))).toEqual([{ line: 5, path: 'spec.schedules[1]', message: 'cron schedule is malformed: "0 25 * * *": hour "25": 25 is outside 0-23' }]);
});

test.each([
  ['* * * * *'], ['*/15 9-17 * * MON-FRI'], ['0 0 1 jan,jul *'], ['0 12 ? * SUN'], ['@daily'], ['@every 1h30m'], ['CRON_TZ=Europe/Zurich 30 6 * * *'], ['5,10,15-20/5 * * * *'],
])('%s is a cron expression', (expr) => {
  expect(cronProblem(expr)).toBeUndefined();
});

test.each([
  ['* * * *', /4 field\(s\)/],
  ['* * * * * *', /6 field\(s\)/],
  ['60 * * * *', /minute "60": 60 is outside 0-59/],
  ['0 0 0 * *', /day of month "0": 0 is outside 1-31/],
  ['0 0 * 13 *', /month "13"/],
  ['0 0 * * 7', /day of week "7": 7 is outside 0-6/],
  ['0 0 * * FUNDAY', /"FUNDAY" is not a value/],
  ['*/0 * * * *', /bad step/],
  ['5-1 * * * *', /the range 5-1 runs backwards/],
  ['@fortnightly', /not a cron descriptor/],
  ['@every soon', /not a cron descriptor/],
])('%s is refused', (expr, why) => {
  expect(cronProblem(expr)).toMatch(why);
});

// `tandem --help` lists the command groups from cli/groups.ts without importing their modules: the
// listed term and summary must be what each module registers, or the root help would drift from the
// group's own help.
import { Command, Help } from 'commander';
import { COMMAND_GROUPS, registerCommandGroups } from '../../../cli/groups.js';
import type { Connectors } from '../../../cli/connectors.js';

const never = async (): Promise<never> => {
  throw new Error('not connected in this test');
};
const connectors: Connectors = { connect: never, connectArgo: never };

test.each(COMMAND_GROUPS.map((g) => [g.name, g]))('the %s group is listed as its module registers it', async (_name, g) => {
  const program = new Command();
  await g.register(program, connectors);
  const cmd = program.commands.find((c) => c.name() === g.name)!;
  expect(cmd).toBeDefined();
  expect(cmd.description()).toBe(g.summary);
  expect(new Help().subcommandTerm(cmd)).toBe(g.term);
});

test('a group is registered in full only when the command line names it', async () => {
  const program = new Command();
  await registerCommandGroups(program, ['runs', 'list'], connectors);
  const names = (n: string) => program.commands.find((c) => c.name() === n)!.commands.map((c) => c.name());
  expect(names('runs')).toEqual(expect.arrayContaining(['list', 'show', 'replay']));
  expect(names('argo')).toEqual([]);
  expect(program.helpInformation()).toContain('quotas [options]');
});

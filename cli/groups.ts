// The command groups of `tandem` (`runs …`, `argo …`, `migration …`, `checkpoints`, `quotas …`) and
// where each registers. Their modules load the Temporal client, the Kubernetes client or Ajv when
// imported, which alone takes longer than the whole of `tandem --help` may. So a group's module is
// imported only when the command line names the group (`tandem runs list`, `tandem help argo`); for any
// other command line the group is only listed, by the term and summary below, in the root help.
// test/unit/cli/groups.test.ts keeps these equal to what the modules register.
import { Help, type Command } from 'commander';
import type { Connectors } from './connectors.js';

export interface CommandGroup {
  name: string;
  /** How the root help lists it (commander's subcommand term). */
  term: string;
  summary: string;
  register: (program: Command, c: Connectors) => Promise<void>;
}

export const COMMAND_GROUPS: CommandGroup[] = [
  {
    name: 'runs',
    term: 'runs',
    summary: 'inspect, replay, retry and resume runs (operators)',
    register: async (p, c) => (await import('./runs.js')).registerRunsCommands(p, c.connect, c.connectArgo),
  },
  {
    name: 'argo',
    term: 'argo',
    summary: 'run Argo Workflows YAML unchanged on Tandem',
    register: async (p, c) => void (await import('./argo.js')).registerArgoCommands(p, c.connectArgo),
  },
  {
    name: 'migration',
    term: 'migration',
    summary: "stage a site's move to Tandem: pilot, dual stack, cut-over (operators)",
    register: async (p, c) => (await import('./migration.js')).registerMigrationCommands(p, c.connect),
  },
  {
    name: 'checkpoints',
    term: 'checkpoints [options] <run>',
    summary: "list and verify a run's checkpoints at home and at every site of TANDEM_SITES_FILE",
    register: async (p) => (await import('./checkpoints.js')).registerCheckpointCommands(p),
  },
  {
    name: 'quotas',
    term: 'quotas [options]',
    summary: 'what each tenant holds at each site, against its quota (TANDEM_QUOTAS_FILE of the workers)',
    register: async (p, c) => (await import('./quotas.js')).registerQuotaCommands(p, c.connect),
  },
  {
    name: 'setup',
    term: 'setup [options]',
    summary: "register Tandem's search attributes in the namespace (once per namespace; platform teams)",
    register: async (p, c) => (await import('./setup.js')).registerSetupCommand(p, c.connect),
  },
  {
    name: 'doctor',
    term: 'doctor [options]',
    summary: 'check the Temporal connection, every configured site and Kubernetes access; one line each with what to fix',
    register: async (p, c) => (await import('./doctor.js')).registerDoctorCommand(p, c),
  },
  {
    name: 'codec-server',
    term: 'codec-server [options]',
    summary: 'serve decryption of encrypted payloads to the Temporal Web UI and CLI (operators)',
    register: async (p) => (await import('./codec-server.js')).registerCodecServerCommand(p),
  },
  {
    name: 'simulate',
    term: 'simulate [options] <trace>',
    summary: 'replay an SWF/CSV job trace under chosen policies: comparison table and an SVG plot (what-if before a policy change)',
    register: async (p) => (await import('./simulate.js')).registerSimulateCommand(p),
  },
  {
    name: 'audit',
    term: 'audit',
    summary: 'list and verify the tamper-evident audit log of external side effects (operators)',
    register: async (p) => (await import('./audit.js')).registerAuditCommands(p),
  },
  {
    name: 'ui',
    term: 'ui [options]',
    summary: "serve Tandem's read-only web view: runs, timelines, loss curves, Argo graphs (loopback only by default)",
    register: async (p, c) => (await import('./ui.js')).registerUiCommand(p, c),
  },
  {
    name: 'logs',
    term: 'logs [options] <run>',
    summary: "a run's job output (stdout, then stderr), local, Slurm or Kubernetes; --follow keeps printing until the run closes",
    register: async (p, c) => (await import('./logs.js')).registerLogsCommand(p, c),
  },
  {
    name: 'deployments',
    term: 'deployments',
    summary: 'the served model endpoints, local or on Kubernetes: list, revisions, stop, rollback, delete',
    register: async (p) => (await import('./deployments.js')).registerDeploymentCommands(p),
  },
];

/** Registers the groups `args` (the command line after the program name) names; lists the others. */
export async function registerCommandGroups(program: Command, args: readonly string[], c: Connectors, groups = COMMAND_GROUPS): Promise<void> {
  const listed = new Map<Command, string>();
  for (const g of groups) {
    if (args.includes(g.name)) await g.register(program, c);
    else listed.set(program.command(g.name).description(g.summary), g.term);
  }
  const help = new Help();
  program.configureHelp({ subcommandTerm: (cmd) => listed.get(cmd) ?? help.subcommandTerm(cmd) });
}

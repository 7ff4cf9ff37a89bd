// `tandem completion bash|zsh`: a shell completion script for the command tree — the root commands,
// every group's subcommands (their modules are loaded for this, once) and each command's long options.
import { Command } from 'commander';
import { COMMAND_GROUPS } from './groups.js';
import type { Connectors } from './connectors.js';

interface Node {
  path: string;
  words: string[];
}

const longOptions = (c: Command) => c.options.map((o) => o.long).filter((l): l is string => !!l);

/** Every command path (`''`, `deployments`, `deployments list`, …) with the words completed after it. */
export async function commandTree(program: Command, c: Connectors): Promise<Node[]> {
  const groups = new Set(COMMAND_GROUPS.map((g) => g.name));
  const roots = program.commands.filter((x) => !groups.has(x.name()) && x.name() !== 'help');
  const nodes: Node[] = [{ path: '', words: [...program.commands.map((x) => x.name()), ...longOptions(program)] }];
  const walk = (cmd: Command, prefix: string) => {
    const path = prefix ? `${prefix} ${cmd.name()}` : cmd.name();
    nodes.push({ path, words: [...cmd.commands.map((x) => x.name()), ...longOptions(cmd)] });
    for (const sub of cmd.commands) walk(sub, path);
  };
  for (const r of roots) walk(r, '');
  for (const g of COMMAND_GROUPS) {
    const tmp = new Command();
    await g.register(tmp, c);
    for (const cmd of tmp.commands) walk(cmd, '');
  }
  return nodes;
}

export function bashScript(nodes: Node[]): string {
  const cases = nodes.map((n) => `    "${n.path}") words="${n.words.join(' ')}" ;;`).join('\n');
  return `# tandem completion for bash: source <(tandem completion bash)
_tandem() {
  local cur path="" i w words
  cur="\${COMP_WORDS[COMP_CWORD]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    case "\${path:+$path }$w" in
${nodes.filter((n) => n.path).map((n) => `      "${n.path}") path="${n.path}" ;;`).join('\n')}
    esac
  done
  case "$path" in
${cases}
    *) words="" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _tandem tandem
`;
}

export function zshScript(nodes: Node[]): string {
  return `#compdef tandem
# tandem completion for zsh: source <(tandem completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bashScript(nodes)}`;
}

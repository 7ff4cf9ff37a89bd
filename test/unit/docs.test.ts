// The README is the first screen a new user reads: it fits in 250 lines, opens with the two commands
// that work on a fresh machine, and its pasteable spec is a valid pipeline. Every relative link of the
// README and of docs/*.md names a file that exists (the README's detail lives in docs/, so a moved or
// renamed page must not leave a dead link), and every #anchor names a heading of the page it points at.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePipelineSpec } from '../../contract/parse.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const PAGES = ['README.md', 'ARCHITECTURE.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's heading anchors: lower case, punctuation other than - and _ dropped, spaces to -. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (m) out.add(m[1].trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-'));
  }
  return out;
}

/** Relative link targets outside code: [text](target) and ![alt](target). */
function links(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((t) => !/^(https?:|mailto:)/.test(t));
}

describe('README', () => {
  test('fits in 250 lines', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(250);
  });

  test('its first screen gives the demo and the test command, then a spec to paste', () => {
    const first = README.split('\n').slice(0, 40).join('\n');
    expect(first).toContain('npm ci && npm run demo');
    expect(first).toContain('npm ci && npm test');
    expect(first).toContain("cat > my-pipeline.yaml <<'EOF'");
  });

  test('the pasteable spec is a valid pipeline, and the commands after it run that file', () => {
    const m = /cat > my-pipeline\.yaml <<'EOF'\n([\s\S]*?)\nEOF\n/.exec(README);
    expect(m).not.toBeNull();
    const spec = parsePipelineSpec(m![1], 'README.md');
    expect(spec.name).toBe('my-model');
    expect(README).toContain('run my-pipeline.yaml');
  });
});

describe('documentation links', () => {
  test.each(PAGES)('every relative link of %s resolves', (page) => {
    const text = readFileSync(join(ROOT, page), 'utf8');
    const dead: string[] = [];
    for (const target of links(text)) {
      const [path, anchor] = target.split('#');
      const file = path ? resolve(ROOT, dirname(page), decodeURIComponent(path)) : join(ROOT, page);
      if (!existsSync(file)) dead.push(`${target} (no such file)`);
      else if (anchor && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(anchor)) dead.push(`${target} (no such heading)`);
    }
    expect(dead).toEqual([]);
  });

  test('the README links every page under docs/', () => {
    const linked = new Set(links(README).map((t) => t.split('#')[0]));
    const pages = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
    expect(pages.filter((p) => !linked.has(p))).toEqual([]);
  });
});

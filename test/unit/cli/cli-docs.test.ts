/**
 * docs/cli.md is generated from the commands' own definitions (scripts/gen-cli-docs.ts): it
 * must be what the generator writes today, and the generator must see every option.
 */
import { readFileSync } from 'node:fs';
import { Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../lambdas/local/program';
import { buildMockSageMakerProgram, buildMockServerProgram } from '../../../lambdas/mocks/cli';
import { CLI_DOCS_PATH, renderCliDocs } from '../../../scripts/gen-cli-docs';

describe('docs/cli.md', () => {
  it('is what the generator writes from the current commands', () => {
    const onDisk = readFileSync(CLI_DOCS_PATH, 'utf8');
    expect(onDisk, 'docs/cli.md is out of date with the commands: run `npm run docs:cli` and commit docs/cli.md').toBe(
      renderCliDocs(),
    );
  });

  it('lists every command and every visible option with its flags', () => {
    const program = buildProgram();
    const page = renderCliDocs(program);
    for (const command of program.commands) {
      expect(page).toContain(`## ${command.name()}\n`);
      for (const option of command.options) {
        if (!option.hidden) expect(page).toContain(`| \`${option.flags.replace(/\|/g, '\\|')}\` |`);
      }
    }
  });

  it.each([
    ['mock-server', buildMockServerProgram],
    ['mock-sagemaker', buildMockSageMakerProgram],
  ])('documents every option of the bundled %s, from its own program', (name, build) => {
    const page = renderCliDocs(buildProgram());
    const section = page.slice(page.indexOf(`## ${name}\n`), page.indexOf('\n## ', page.indexOf(`## ${name}\n`) + 1));
    expect(section).toContain(`capture-replay ${name} [options]`);
    const options = build().options;
    expect(options.map((o) => o.long)).toEqual(
      expect.arrayContaining(['--port', '--ttft-ms', '--itl-ms', '--output-tokens', '--slots', '--error-rate']),
    );
    for (const option of options) expect(section).toContain(`| \`${option.flags}\` |`);
    expect(section).toMatch(/\| `--slots <n>` \| [^|]+ \| unlimited \|/);
  });

  it('changes when an option, its default or its choices change', () => {
    const base = renderCliDocs(buildProgram());

    const added = buildProgram();
    added.commands
      .find((c) => c.name() === 'replay')
      ?.option('--brand-new <n>', 'an option the page does not list yet', '7');
    const withAdded = renderCliDocs(added);
    expect(withAdded).not.toBe(base);
    expect(withAdded).toContain('| `--brand-new <n>` | an option the page does not list yet | `7` |');

    const changed = buildProgram();
    const replay = changed.commands.find((c) => c.name() === 'replay');
    const wait = replay?.options.find((o) => o.long === '--wait');
    wait?.default('coarse').choices(['coarse', 'precise', 'spin']);
    const withChanged = renderCliDocs(changed);
    expect(withChanged).toContain('(one of `coarse`, `precise`, `spin`) | `coarse` |');
    expect(withChanged).not.toBe(base);
  });

  it('shows a negatable flag without a default and a mandatory option as required', () => {
    const program = buildProgram();
    program.commands
      .find((c) => c.name() === 'compare')
      ?.addOption(new Option('--must <x>', 'needed').makeOptionMandatory());
    const page = renderCliDocs(program);
    expect(page).toContain('| `--no-preflight` | do not check');
    expect(page).toMatch(/\| `--no-preflight` \| [^|]+ \| {2}\|\n/);
    expect(page).toContain('| `--must <x>` | needed (required) |  |');
  });

  it('escapes angle brackets outside code spans and pipes everywhere in table cells', () => {
    const page = renderCliDocs(buildProgram());
    expect(page).toContain('results go to &lt;dir&gt;/&lt;run-id&gt;/&lt;target-name&gt;/');
    expect(page).toContain('| `--workers <n\\|auto>` |');
  });
});

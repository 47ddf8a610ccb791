/**
 * The help a newcomer reads (program.ts): it fits an 80-column terminal, shows the defaults of
 * the options that have one, and names the SageMaker form of a target where a target is given.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../lambdas/local/program';

/** What `--help` prints for `path` (none: the top level), at `width` columns. */
function help(path: string[] = [], width = 80): string {
  let command: Command = buildProgram();
  for (const name of path) command = command.commands.find((c) => c.name() === name) as Command;
  let text = '';
  command.configureOutput({ writeOut: (s) => (text += s), getOutHelpWidth: () => width });
  command.outputHelp();
  return text;
}

const optionLine = (text: string, flag: string) => {
  const at = text.indexOf(`  ${flag}`);
  const next = text.slice(at + 2).search(/\n {2}-/);
  return text.slice(at, next < 0 ? undefined : at + 2 + next).replace(/\s+/g, ' ');
};

describe('help', () => {
  it('top level: no line over 80 columns, the exit codes included', () => {
    const text = help();
    expect(text).toContain('Exit codes:');
    const long = text.split('\n').filter((line) => line.length > 80);
    expect(long).toEqual([]);
  });

  it('shows the defaults of --min-effect (and --resamples) and says what --late-tolerance is without one', () => {
    for (const command of ['replay', 'compare']) {
      expect(optionLine(help([command]), '--min-effect')).toContain('(default: 0.02)');
      expect(optionLine(help([command]), '--resamples')).toContain('(default: 2000)');
    }
    expect(optionLine(help(['replay']), '--late-tolerance')).toContain(
      'default: none, every request is fired however late',
    );
  });

  it('--url and --target name the SageMaker form', () => {
    const text = help(['replay']);
    expect(optionLine(text, '--url')).toContain('sagemaker:<endpoint>');
    expect(optionLine(text, '--target <name=url>')).toContain('sagemaker:<endpoint>');
  });

  it('replay and compare take --overwrite; compare takes --allow-partial', () => {
    expect(help(['replay'])).toContain('--overwrite');
    expect(help(['compare'])).toContain('--overwrite');
    expect(help(['compare'])).toContain('--allow-partial');
  });
});

/**
 * Writes docs/cli.md from the commander program the CLI runs (lambdas/local/program.ts, with
 * the bundled mocks' programs from lambdas/mocks/cli.ts), built and read, never parsed: every
 * command's usage, description, arguments, options (defaults, choices) and added help texts.
 * The page is generated so that it cannot drift from `--help`; test/unit/cli/cli-docs.test.ts
 * fails when docs/cli.md differs from what this writes.
 *
 * Usage: npm run docs:cli
 */
import type { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Argument, Command, Help, Option } from 'commander';
import { buildProgram } from '../lambdas/local/program';

export const CLI_DOCS_PATH = fileURLToPath(new URL('../docs/cli.md', import.meta.url));

const HELP_EVENTS = ['beforeAllHelp', 'beforeHelp', 'afterHelp', 'afterAllHelp'] as const;

/** Markdown text of a table cell: `|` escaped everywhere, `<` and `>` outside code spans (else read as HTML). */
function cell(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part) => (part.startsWith('`') ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;')))
    .join('')
    .replace(/\|/g, '\\|')
    .replace(/\s*\n\s*/g, ' ');
}

/** `text` as one inline code span, with a fence longer than any backtick run inside it. */
function code(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return longest > 0 ? `${fence} ${text} ${fence}` : `${fence}${text}${fence}`;
}

/** A default as the CLI's help shows it, for the defaults column (a negated flag's `true` is its absence). */
function defaultOf(option: Option): string {
  if (option.defaultValueDescription !== undefined) return cell(option.defaultValueDescription);
  if (option.defaultValue === undefined || option.negate) return '';
  if (typeof option.defaultValue === 'boolean') return option.defaultValue ? 'on' : 'off';
  return code(typeof option.defaultValue === 'string' ? option.defaultValue : JSON.stringify(option.defaultValue));
}

function choicesOf(choices: readonly string[] | undefined): string {
  return choices && choices.length > 0 ? ` (one of ${choices.map(code).join(', ')})` : '';
}

function optionsTable(help: Help, command: Command): string[] {
  const options = help.visibleOptions(command);
  if (options.length === 0) return [];
  return [
    '| option | description | default |',
    '| --- | --- | --- |',
    ...options.map(
      (o) =>
        `| ${code(o.flags).replace(/\|/g, '\\|')} | ` +
        `${cell(o.description)}${choicesOf(o.argChoices)}${o.mandatory ? ' (required)' : ''} | ` +
        `${defaultOf(o)} |`,
    ),
    '',
  ];
}

function argumentTerm(argument: Argument): string {
  const name = `${argument.name()}${argument.variadic ? '...' : ''}`;
  return argument.required ? `<${name}>` : `[${name}]`;
}

function argumentsTable(help: Help, command: Command): string[] {
  const args = help.visibleArguments(command);
  if (args.length === 0) return [];
  return [
    '| argument | description | default |',
    '| --- | --- | --- |',
    ...args.map(
      (a) =>
        `| ${code(argumentTerm(a))} | ${cell(a.description)}${choicesOf(a.argChoices)} | ` +
        `${a.defaultValue === undefined ? '' : code(JSON.stringify(a.defaultValue))} |`,
    ),
    '',
  ];
}

/** The texts added with addHelpText on this command, in the order --help prints them. */
function helpTexts(command: Command): string[] {
  let text = '';
  const context = { error: false, write: (s: string) => (text += s), command };
  // commander's Command is an EventEmitter at run time (addHelpText registers these events); its typings omit it.
  const events = command as unknown as EventEmitter;
  for (const event of HELP_EVENTS) events.emit(event, context);
  const trimmed = text.replace(/^\n+|\s+$/g, '');
  return trimmed ? ['```text', trimmed, '```', ''] : [];
}

function commandSection(help: Help, command: Command): string[] {
  return [
    `## ${command.name()}`,
    '',
    cell(command.description()),
    '',
    '```text',
    help.commandUsage(command),
    '```',
    '',
    ...argumentsTable(help, command),
    ...optionsTable(help, command),
    ...helpTexts(command),
  ];
}

/** docs/cli.md for `program`, every command in definition order. */
export function renderCliDocs(program: Command = buildProgram()): string {
  const help = program.createHelp();
  const commands = help.visibleCommands(program).filter((c) => c.name() !== 'help');
  const lines = [
    '# CLI reference',
    '',
    "<!-- Generated from the commands' definitions (lambdas/local/program.ts) by scripts/gen-cli-docs.ts. Do " +
      'not edit: run `npm run docs:cli`. -->',
    '',
    cell(program.description()),
    '',
    '```text',
    help.commandUsage(program),
    '```',
    '',
    '| command | what it does |',
    '| --- | --- |',
    ...commands.map((c) => `| [${c.name()}](#${c.name()}) | ${cell(c.description())} |`),
    '',
    `${code(`${program.name()} <command> --help`)} prints the same for one command.`,
    '',
    '## Global options',
    '',
    ...optionsTable(help, program),
    ...helpTexts(program),
    ...commands.flatMap((c) => commandSection(help, c)),
  ];
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(CLI_DOCS_PATH, renderCliDocs());
  console.log(`wrote ${CLI_DOCS_PATH}`);
}

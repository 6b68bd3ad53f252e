/**
 * yargs' complaints said the way the command line is typed: options with their dashes, the
 * command named, a value's choices as a list. yargs counts arguments ("Not enough non-option
 * arguments: got 0, need at least 1"), prints its own table ("Invalid values: Argument: ...")
 * and lists an unknown option twice (`bogus-opt, bogusOpt`), none of which tells a finance
 * person what to type.
 */

/** What a command's missing positional is, for "payouts webhooks verify needs ...". */
export interface Needs {
  what: string;
  usage: string;
}

/**
 * yargs' message in words. `command` is the command as typed (`register copy`, `webhooks
 * verify`), `needs` what its positionals are when it has some. Messages it does not know are
 * returned as they are.
 */
export function usageInWords(
  message: string,
  argv: readonly string[],
  command: string,
  needs: Needs | undefined,
): string {
  if (/^Not enough non-option arguments/.test(message))
    return needs
      ? `payouts ${command} needs ${needs.what}: ${needs.usage}`
      : `payouts ${command} needs more arguments: payouts ${command} --help shows them`;
  const missing = /^Missing required arguments?: (.*)$/.exec(message);
  if (missing) return `payouts ${command} needs ${andList(missing[1]!.split(', ').map((n) => `--${n}`))}`;
  const exclusive = /^Arguments (\S+) and (\S+) are mutually exclusive$/.exec(message);
  if (exclusive) return `--${exclusive[1]} and --${exclusive[2]} cannot be given together: choose one`;
  if (/^Invalid values:/.test(message)) return invalidValues(message, argv, command) ?? message;
  const unknown = /^Unknown arguments?: (.*)$/.exec(message);
  if (unknown) {
    const names = unknown[1]!.split(', ');
    // yargs adds the camelCase twin of every dashed name it does not know.
    const typed = names.filter((name) => !names.includes(kebab(name)) || kebab(name) === name);
    return `Unknown argument${typed.length === 1 ? '' : 's'}: ${typed.join(', ')}`;
  }
  return message;
}

/** "Argument: log-format, Given: "xml", Choices: "json", "text"" lines, one sentence each. */
function invalidValues(message: string, argv: readonly string[], command: string): string | undefined {
  const sentences: string[] = [];
  for (const line of message.split('\n').slice(1)) {
    const match = /^\s*Argument: (\S+), Given: (.*), Choices: (.*)$/.exec(line);
    if (match === null) return undefined;
    const [, name, given, choices] = match as unknown as [string, string, string, string];
    let listed: string[];
    try {
      listed = (JSON.parse(`[${choices}]`) as unknown[]).map(String);
    } catch {
      return undefined;
    }
    const asOption = argv.some((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
    sentences.push(
      asOption
        ? `--${name} must be ${orList(listed)}, got ${given}`
        : `${command.split(' ')[0]} has no ${name} ${given}: use ${orList(listed)}`,
    );
  }
  return sentences.length > 0 ? sentences.join('; ') : undefined;
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

function andList(words: readonly string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

function orList(words: readonly string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

/**
 * "Did you mean": the nearest command or option name for a mistyped one (`payouts valdate`,
 * `--concurency`), by edit distance, so a usage error says what to type instead.
 */
import { editDistance } from '../edit-distance.js';

export { editDistance };

/** The candidate nearest to `word`, if it is near enough to be what was meant. */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(word.toLowerCase(), name.toLowerCase());
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  // A third of the word, at least one edit and at most three: near enough to be a typo.
  const allowed = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  return best !== undefined && best.distance <= allowed ? best.name : undefined;
}

/**
 * yargs' "Unknown argument(s): a, b" with a suggestion for each unknown name: a name typed as
 * an option (`--sandbx`, as `argv` shows) is matched against the command's options only; a
 * bare first word against the commands, then the options. Other messages as they are.
 */
export function withSuggestions(
  message: string,
  commands: readonly string[],
  options: readonly string[],
  argv: readonly string[] = [],
): string {
  const match = /^Unknown arguments?: (.*)$/.exec(message);
  if (match === null) return message;
  const unknown = match[1]!.split(', ');
  const hints: string[] = [];
  const typedAsOption = (name: string) =>
    argv.some((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`) || arg === `-${name}`);
  unknown.forEach((name, i) => {
    const asOption = nearest(name, options);
    const firstWord = argv.length === 0 ? i === 0 : argv.find((arg) => !arg.startsWith('-')) === name;
    const asCommand = firstWord && !typedAsOption(name) ? nearest(name, commands) : undefined;
    if (asCommand !== undefined) hints.push(`"${name}": did you mean the command ${asCommand}?`);
    else if (asOption !== undefined) hints.push(`"${name}": did you mean --${asOption}?`);
  });
  return hints.length === 0 ? message : `${message} - ${hints.join(', ')}`;
}

/**
 * "Did you mean": the nearest command or option name for a mistyped one (`payouts valdate`,
 * `--concurency`), by edit distance, so a usage error says what to type instead.
 */

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j += 1) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

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

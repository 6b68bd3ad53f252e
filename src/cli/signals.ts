/**
 * Resolves at the first SIGINT, SIGTERM or SIGHUP, then stops listening: long-running commands
 * stop cleanly (a closed terminal or session must not kill them unrecorded).
 */
export function untilSignalled(): Promise<void> {
  const names: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  return new Promise((resolve) => {
    const stop = () => {
      for (const name of names) process.off(name, stop);
      resolve();
    };
    for (const name of names) process.on(name, stop);
  });
}

/**
 * stdout or stderr closed by its reader (`payouts run --json | head -c 1`) fails every later
 * write with EPIPE, which would end a run that is paying with an unhandled error. What cannot be
 * printed is dropped instead: the results file, the register and a --log-file still record
 * everything.
 */
export function tolerateClosedOutput(
  streams: NodeJS.WritableStream[] = [process.stdout, process.stderr],
): void {
  for (const stream of streams) stream.on('error', ignoreOutputError);
}

function ignoreOutputError(): void {
  // Nowhere left to report it: the stream that failed is the report.
}

/**
 * Once a command has returned (results written, logs flushed), nothing may hold the process
 * open: a timer or socket left behind by a stopped run would otherwise delay its exit code.
 */
export function exitWhenIdle(afterMs = 2_000): void {
  setTimeout(() => process.exit(), afterMs).unref();
}

/** Resolves at the first SIGINT or SIGTERM, then stops listening: long-running commands stop cleanly. */
export function untilSignalled(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

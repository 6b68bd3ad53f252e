/** Why a file the user named could not be read, in words: an errno's code is for programmers. */
export function unreadableReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'file not found';
  if (code === 'EISDIR') return 'is a directory, not a file';
  if (code === 'EACCES' || code === 'EPERM') return 'cannot be read: permission denied';
  return `cannot be read: ${(error as Error | undefined)?.message ?? String(error)}`;
}

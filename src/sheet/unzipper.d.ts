// unzipper ships no types; zip.ts describes the little it uses (`Open.file`) itself.
declare module 'unzipper' {
  const unzipper: unknown;
  export default unzipper;
}

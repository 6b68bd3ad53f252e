import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { TextDecoder } from 'node:util';
import { SheetError, UsageError } from '../errors.js';
import { columnLetters } from './column-letters.js';

/**
 * `--encoding` values; without one, UTF-8 (a BOM always wins). `latin1` is `windows-1252`
 * (what WHATWG maps it to); `macroman` is the classic Mac Excel "CSV".
 */
export type CsvEncoding = 'utf8' | 'utf16le' | 'latin1' | 'windows-1252' | 'macroman';

/** The `--encoding` values, for the CLI's choices. */
export const CSV_ENCODINGS: readonly CsvEncoding[] = [
  'utf8',
  'utf16le',
  'latin1',
  'windows-1252',
  'macroman',
];

/** What the first bytes of a CSV file tell: its text encoding, BOM length and delimiter. */
export interface CsvDialect {
  /** WHATWG label: `utf-8`, `utf-16le`, `utf-16be`, `windows-1252` or `macintosh` (Mac Roman). */
  encoding: 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252' | 'macintosh';
  bomLength: number;
  delimiter: string;
}

const SNIFF_CHUNK = 64 * 1024;
// A header line longer than this is not a payout sheet; the delimiter is guessed from what was read.
const SNIFF_LIMIT = 4 * 1024 * 1024;
const EMPTY_SHEET = 'the sheet is empty: the first row must hold the column headers';

/** `--delimiter` as typed: one character, or `tab` / `\t` for a tab. */
export function parseDelimiterOption(value: string): string {
  const delimiter = value === 'tab' || value === '\\t' ? '\t' : value;
  if ([...delimiter].length !== 1 || /["\r\n]/.test(delimiter)) {
    throw new UsageError(
      `--delimiter ${JSON.stringify(value)}: give one character such as "," or ";" (or "tab") - quotes and line breaks cannot be delimiters`,
    );
  }
  return delimiter;
}

/** The word for a delimiter in messages. */
export function delimiterName(delimiter: string): string {
  return delimiter === '\t' ? 'tab' : `"${delimiter}"`;
}

/**
 * Reads the start of a CSV file to learn its encoding (BOM, or `--encoding`) and its delimiter
 * (comma or semicolon detected from the header line, outside quotes; tab too, as Excel's
 * "Unicode Text" uses it). Throws SheetError for an empty or binary file.
 */
export async function sniffCsvDialect(file: string, encodingOption?: CsvEncoding): Promise<CsvDialect> {
  const handle = await open(file, 'r');
  try {
    let head = Buffer.alloc(0);
    let ended = false;
    let dialect: Omit<CsvDialect, 'delimiter'> | undefined;
    for (;;) {
      // Each look decodes and scans the whole head again: growing it by doubling keeps a long
      // first line (a 3 MB header cell) a handful of looks, not fifty.
      const size = Math.max(SNIFF_CHUNK, head.length);
      const chunk = Buffer.alloc(size);
      const { bytesRead } = await handle.read(chunk, 0, size, head.length);
      ended = bytesRead < size;
      head = Buffer.concat([head, chunk.subarray(0, bytesRead)]);
      if (dialect === undefined) {
        if (head.length === 0) throw new SheetError(file, EMPTY_SHEET);
        dialect = encodingOf(head, encodingOption);
        if (!dialect.encoding.startsWith('utf-16')) refuseBinary(file, head, encodingOption);
        if (dialect.bomLength === 0) refuseWrongSingleByte(file, head, dialect.encoding);
      }
      const text = new TextDecoder(dialect.encoding, { ignoreBOM: true }).decode(
        head.subarray(dialect.bomLength),
      );
      const found = delimiterOfHeaderLine(text);
      if (found.complete || ended || head.length >= SNIFF_LIMIT) {
        if (!found.hasContent && ended) throw new SheetError(file, EMPTY_SHEET);
        return { ...dialect, delimiter: found.delimiter };
      }
    }
  } finally {
    await handle.close();
  }
}

function encodingOf(head: Buffer, option?: CsvEncoding): Omit<CsvDialect, 'delimiter'> {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf-8', bomLength: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', bomLength: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', bomLength: 2 };
  if (option === 'utf16le') return { encoding: 'utf-16le', bomLength: 0 };
  // WHATWG maps the label latin1 onto windows-1252, which is what Excel's "CSV" writes on Windows.
  if (option === 'latin1' || option === 'windows-1252') return { encoding: 'windows-1252', bomLength: 0 };
  if (option === 'macroman') return { encoding: 'macintosh', bomLength: 0 };
  return { encoding: 'utf-8', bomLength: 0 };
}

/** The two single-byte encodings spreadsheets write CSV in, with the option that reads each. */
const SINGLE_BYTE = [
  { encoding: 'windows-1252', option: 'windows-1252', name: 'Windows-1252 (Excel "CSV" on Windows)' },
  { encoding: 'macintosh', option: 'macroman', name: 'Mac Roman (classic Mac Excel "CSV")' },
] as const;

/**
 * Which single-byte encoding a file that is not UTF-8 is in, from its bytes: the one in which
 * more of its non-ASCII characters are lower-case letters. Accented letters of names are mostly
 * lower-case; read in the wrong one of the two, they turn into capitals and punctuation
 * (Mac Roman é is Windows-1252 Ž, Windows-1252 é is Mac Roman È). Undefined when it cannot tell.
 */
export function guessSingleByte(bytes: Uint8Array): (typeof SINGLE_BYTE)[number] | undefined {
  const scores = SINGLE_BYTE.map(({ encoding }) => lowerCaseLetters(new TextDecoder(encoding).decode(bytes)));
  if (scores[0]! === scores[1]!) return undefined;
  return scores[0]! > scores[1]! ? SINGLE_BYTE[0] : SINGLE_BYTE[1];
}

function lowerCaseLetters(text: string): number {
  let n = 0;
  for (const match of text.matchAll(/[^ -~\t\r\n]/g)) if (/\p{Ll}/u.test(match[0])) n++;
  return n;
}

// `--encoding latin1` on a Mac Roman file garbled every accented name without a word.
// A single-byte encoding the bytes clearly contradict is refused with the one that fits.
function refuseWrongSingleByte(file: string, head: Buffer, encoding: CsvDialect['encoding']): void {
  if (encoding !== 'windows-1252' && encoding !== 'macintosh') return;
  const guess = guessSingleByte(head);
  if (guess === undefined || guess.encoding === encoding) return;
  const given = SINGLE_BYTE.find((e) => e.encoding === encoding)!;
  throw new SheetError(
    file,
    `the file is not ${given.name.replace(/ \(.*/, '')} text: its accented letters read as ${guess.name}. Pass --encoding ${guess.option}, or save it as "CSV UTF-8 (Comma delimited)"`,
  );
}

// NUL bytes never occur in CSV text; they mean a binary file (or UTF-16 without its BOM).
function refuseBinary(file: string, head: Buffer, option?: CsvEncoding): void {
  if (head.indexOf(0) === -1) return;
  const sample = head.subarray(0, 1024);
  let oddNuls = 0;
  for (let i = 1; i < sample.length; i += 2) if (sample[i] === 0) oddNuls++;
  if (option !== 'utf16le' && oddNuls > sample.length / 4) {
    throw new SheetError(
      file,
      'the file looks like UTF-16 text without a byte order mark: save it as "CSV UTF-8 (Comma delimited)", or pass --encoding utf16le',
    );
  }
  throw new SheetError(
    file,
    'does not look like a CSV or XLSX file (it holds binary data): save the sheet as "CSV UTF-8 (Comma delimited)" or as an Excel workbook (.xlsx)',
  );
}

/**
 * The delimiter of the first non-blank line that has one (a title line above the header, such as
 * "Payouts November 2026", has none; up to 10 lines are looked at): the most frequent of comma,
 * semicolon and tab outside quotes (ties go to comma, then semicolon). `complete` is false while
 * the line may go on.
 */
export function delimiterOfHeaderLine(text: string): {
  delimiter: string;
  complete: boolean;
  hasContent: boolean;
} {
  let commas = 0;
  let semicolons = 0;
  let tabs = 0;
  let quoted = false;
  let lineHasContent = false;
  let hasContent = false;
  let complete = false;
  let titleLines = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 34 /* " */) {
      quoted = !quoted;
      lineHasContent = true;
    } else if (quoted) {
    } else if (ch === 10 || ch === 13) {
      if (lineHasContent || commas + semicolons + tabs > 0) {
        hasContent = true;
        if (commas + semicolons + tabs > 0 || titleLines >= 9) {
          complete = true;
          break;
        }
        // A line without any delimiter is a title: the header comes below it.
        titleLines++;
        lineHasContent = false;
      }
    } else if (ch === 44) commas++;
    else if (ch === 59) semicolons++;
    else if (ch === 9) tabs++;
    else if (ch > 32 && ch !== 0xfeff) lineHasContent = true;
  }
  hasContent ||= lineHasContent || commas + semicolons + tabs > 0;
  const delimiter = commas >= semicolons && commas >= tabs ? ',' : semicolons >= tabs ? ';' : '\t';
  return { delimiter, complete, hasContent };
}

/** Turns file chunks into UTF-8 for the parser, refusing bytes that are not text in the encoding. */
export interface ChunkDecoder {
  decode(chunk: Buffer): Promise<Buffer>;
  end(): Promise<void>;
}

/** The decoder for a dialect: UTF-8 is checked and passed through, others are transcoded. */
export function chunkDecoder(file: string, dialect: CsvDialect): ChunkDecoder {
  return dialect.encoding === 'utf-8'
    ? new Utf8Check(file, dialect.bomLength, dialect.delimiter)
    : new Transcoder(file, dialect);
}

// Checks UTF-8 chunk by chunk with the native isUtf8; a character cut by a chunk boundary is
// carried over to the next chunk. The parser gets the bytes unchanged (it copes with cut characters).
class Utf8Check implements ChunkDecoder {
  private carry: Buffer | undefined;
  private offset = 0;

  constructor(
    private readonly file: string,
    private readonly start: number,
    private readonly delimiter: string,
  ) {}

  async decode(chunk: Buffer): Promise<Buffer> {
    const data = this.carry === undefined ? chunk : Buffer.concat([this.carry, chunk]);
    this.carry = undefined;
    const tail = incompleteTail(data);
    const body = tail === 0 ? data : data.subarray(0, data.length - tail);
    if (!isUtf8(body)) await this.refuse(this.offset + firstInvalidUtf8(body));
    if (tail > 0) this.carry = Buffer.from(data.subarray(data.length - tail));
    this.offset += body.length;
    return chunk;
  }

  async end(): Promise<void> {
    if (this.carry !== undefined) await this.refuse(this.offset);
  }

  private async refuse(offset: number): Promise<never> {
    const place = await placeAtOffset(this.file, this.start, this.start + offset, this.delimiter);
    // The hint names the encoding the bytes fit, never one that would garble them.
    const sample = await bytesAround(this.file, this.start + offset);
    const guess = guessSingleByte(sample);
    const hint =
      guess === undefined
        ? 'Save it as "CSV UTF-8 (Comma delimited)", or pass --encoding windows-1252 (Excel "CSV" on Windows) or --encoding macroman (classic Mac Excel "CSV") if you know which one it is'
        : `it looks like ${guess.name}. Save it as "CSV UTF-8 (Comma delimited)", or pass --encoding ${guess.option}`;
    throw new SheetError(
      this.file,
      `row ${place.row}, column ${columnLetters(place.column)} is not valid UTF-8 text: ${hint}`,
    );
  }
}

class Transcoder implements ChunkDecoder {
  private readonly decoder: TextDecoder;
  private offset = 0;

  constructor(
    private readonly file: string,
    private readonly dialect: CsvDialect,
  ) {
    this.decoder = new TextDecoder(dialect.encoding, { fatal: true, ignoreBOM: true });
  }

  async decode(chunk: Buffer): Promise<Buffer> {
    const text = this.decodeOrRefuse(chunk);
    this.offset += chunk.length;
    return Buffer.from(text, 'utf8');
  }

  async end(): Promise<void> {
    this.decodeOrRefuse(undefined);
  }

  private decodeOrRefuse(chunk: Buffer | undefined): string {
    try {
      return chunk === undefined ? this.decoder.decode() : this.decoder.decode(chunk, { stream: true });
    } catch (error) {
      throw new SheetError(
        this.file,
        `the text near byte ${this.dialect.bomLength + this.offset} is not valid ${this.dialect.encoding.toUpperCase()}: save the sheet as "CSV UTF-8 (Comma delimited)"`,
        { cause: error },
      );
    }
  }
}

// Bytes at the end of `data` that begin a UTF-8 character the next chunk completes.
function incompleteTail(data: Buffer): number {
  const n = data.length;
  for (let i = 1; i <= 3 && i <= n; i++) {
    const byte = data[n - i]!;
    if (byte < 0x80) return 0;
    if (byte >= 0xc0) {
      const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      return length > i ? i : 0;
    }
  }
  return 0;
}

/** Offset of the first byte that breaks UTF-8 (only called once isUtf8 said no). */
export function firstInvalidUtf8(data: Uint8Array): number {
  let i = 0;
  while (i < data.length) {
    const byte = data[i]!;
    if (byte < 0x80) {
      i++;
      continue;
    }
    let length: number;
    let min: number;
    if (byte >= 0xc2 && byte <= 0xdf) [length, min] = [2, 0x80];
    else if (byte >= 0xe0 && byte <= 0xef) [length, min] = [3, 0x800];
    else if (byte >= 0xf0 && byte <= 0xf4) [length, min] = [4, 0x10000];
    else return i;
    if (i + length > data.length) return i;
    let codePoint = byte & (0xff >> (length + 1));
    for (let k = 1; k < length; k++) {
      const next = data[i + k]!;
      if ((next & 0xc0) !== 0x80) return i;
      codePoint = (codePoint << 6) | (next & 0x3f);
    }
    if (codePoint < min || codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) return i;
    i += length;
  }
  return data.length;
}

// Only on the error path: the bytes from the first bad one on, enough to tell the encoding.
async function bytesAround(file: string, offset: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(SNIFF_CHUNK);
    const { bytesRead } = await handle.read(buffer, 0, SNIFF_CHUNK, Math.max(0, offset - 1024));
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Where a byte of a CSV file is, as a spreadsheet shows it: row (1 is the first) and column (0 is A). */
export interface CsvPlace {
  row: number;
  column: number;
}

const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;

/**
 * Only on the error path: the row and column of the byte at `offset`, read the way the CSV
 * reader reads the file from `start` (after a BOM): a row ends at CRLF, LF or CR outside
 * quotes, a quote opens a quoted cell only at the start of a cell (elsewhere it is a
 * character), and `""` inside one is a quote. A line count would be wrong after a cell with a
 * line break, and says nothing of the column.
 */
export async function placeAtOffset(
  file: string,
  start: number,
  offset: number,
  delimiter: string,
): Promise<CsvPlace> {
  const place: CsvPlace = { row: 1, column: 0 };
  if (offset <= start) return place;
  const separator = Buffer.from(delimiter, 'utf8');
  let cellStart = true;
  let quoted = false;
  // A byte that needs the next chunk to be read: a CR (CRLF?) or a quote in a quoted cell ("").
  let pending: number | undefined;
  for await (const chunk of createReadStream(file, { start, end: offset - 1 })) {
    const bytes =
      pending === undefined ? (chunk as Buffer) : Buffer.concat([Buffer.from([pending]), chunk as Buffer]);
    pending = undefined;
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i]!;
      if (quoted) {
        if (byte !== QUOTE) continue;
        if (i + 1 === bytes.length) {
          pending = byte;
          break;
        }
        if (bytes[i + 1] === QUOTE) i++;
        else quoted = false;
      } else if (byte === QUOTE && cellStart) {
        quoted = true;
        cellStart = false;
      } else if (byte === CR || byte === LF) {
        if (byte === CR && i + 1 === bytes.length) {
          pending = byte;
          break;
        }
        if (byte === CR && bytes[i + 1] === LF) i++;
        place.row++;
        place.column = 0;
        cellStart = true;
      } else if (byte === separator[0] && bytes.subarray(i, i + separator.length).equals(separator)) {
        i += separator.length - 1;
        place.column++;
        cellStart = true;
      } else {
        cellStart = false;
      }
    }
  }
  // A CR as the last byte before `offset` ends its row; a quote there closes its cell.
  if (pending === CR) {
    place.row++;
    place.column = 0;
  }
  return place;
}

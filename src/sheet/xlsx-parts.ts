import { SaxesParser as Parser, type SaxesParser, type SaxesTagPlain } from 'saxes';
import { MAX_XML_TEXT_RUN } from './limits.js';
import type { ZipArchive, ZipEntry } from './zip.js';

// saxes and unzipper (zip.ts) are what exceljs reads XLSX with, declared at the versions it
// takes, so npm installs one copy of each.

type PlainParser = SaxesParser<{ xmlns: false; position: false }>;

/** Callbacks for the elements of one XML part; names keep their prefix (`x:c` stays `x:c`). */
export interface XmlHandlers {
  open(name: string, attributes: Record<string, string>): void;
  text?(text: string): void;
  close?(name: string): void;
}

/** A fresh non-validating SAX parser wired to handlers; position tracking off, for speed. */
export function xmlParser(handlers: XmlHandlers): PlainParser {
  const parser: PlainParser = new Parser({ xmlns: false, position: false });
  parser.on('opentag', (tag: SaxesTagPlain) => handlers.open(localName(tag.name), tag.attributes));
  if (handlers.text) parser.on('text', handlers.text);
  const close = handlers.close;
  if (close) parser.on('closetag', (tag: SaxesTagPlain) => close(localName(tag.name)));
  return parser;
}

// Strict OOXML files may prefix every element (`x:row`); the element's own name is what counts.
function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

/**
 * Cuts every run of text between two tags to MAX_XML_TEXT_RUN characters as the part streams by,
 * so that neither the XML parser nor a cell ever holds a huge one: the cell
 * then reads as longer than a cell may be and is an error on its row. Costs two string searches
 * per chunk while the runs are short.
 */
export class TextRunLimit {
  // Characters since the last "<", and whether the current run is being dropped.
  private run = 0;
  private dropping = false;

  constructor(private readonly limit = MAX_XML_TEXT_RUN) {}

  /** The chunk with every run over the limit cut. */
  cut(chunk: string): string {
    const first = chunk.indexOf('<');
    if (first === -1) return this.continueRun(chunk);
    let out = first === 0 ? '' : this.continueRun(chunk.slice(0, first));
    const last = chunk.lastIndexOf('<');
    // Runs inside the chunk are shorter than the chunk: only a huge chunk needs a closer look.
    if (chunk.length - first > this.limit) {
      let from = first;
      while (from <= last) {
        const next = chunk.indexOf('<', from + 1);
        const end = next === -1 ? chunk.length : next;
        this.run = 0;
        this.dropping = false;
        out += this.continueRun(chunk.slice(from, end));
        from = end;
      }
      return out;
    }
    out += chunk.slice(first);
    this.run = chunk.length - last;
    this.dropping = false;
    return out;
  }

  private continueRun(text: string): string {
    if (this.dropping) return '';
    if (this.run + text.length <= this.limit) {
      this.run += text.length;
      return text;
    }
    let keep = this.limit - this.run;
    // Never split an entity or a surrogate pair: the parser would refuse the part.
    const amp = text.lastIndexOf('&', keep);
    if (amp !== -1 && text.indexOf(';', amp) >= keep) keep = amp;
    const code = text.charCodeAt(keep - 1);
    if (code >= 0xd800 && code <= 0xdbff) keep -= 1;
    this.run = this.limit;
    this.dropping = true;
    return text.slice(0, keep);
  }
}

/** Streams an XML part through a parser built from handlers. */
export async function parseXmlPart(entry: ZipEntry, handlers: XmlHandlers): Promise<void> {
  const parser = xmlParser(handlers);
  const decoder = new TextDecoder('utf-8');
  const limit = new TextRunLimit();
  const stream = entry.stream();
  try {
    for await (const chunk of stream)
      parser.write(limit.cut(decoder.decode(chunk as Buffer, { stream: true })));
    parser.write(limit.cut(decoder.decode()));
    parser.close();
  } finally {
    stream.destroy();
  }
}

/** A relationship of a `.rels` part. */
export interface Relationship {
  id: string;
  type: string;
  target: string;
}

const REL_TYPE = {
  officeDocument: '/officeDocument',
  worksheet: '/worksheet',
  sharedStrings: '/sharedStrings',
  styles: '/styles',
} as const;

/** The relationships of a part (`xl/workbook.xml` → `xl/_rels/workbook.xml.rels`), if any. */
export async function readRelationships(zip: ZipArchive, partPath: string): Promise<Relationship[]> {
  const slash = partPath.lastIndexOf('/');
  const relsPath = `${partPath.slice(0, slash + 1)}_rels/${partPath.slice(slash + 1)}.rels`;
  const entry = zip.entry(relsPath);
  if (!entry) return [];
  const relationships: Relationship[] = [];
  await parseXmlPart(entry, {
    open(name, a) {
      if (name === 'Relationship' && a['Id'] && a['Target'] && a['TargetMode'] !== 'External') {
        relationships.push({
          id: a['Id'],
          type: a['Type'] ?? '',
          target: resolvePartPath(partPath, a['Target']),
        });
      }
    },
  });
  return relationships;
}

/** Where the workbook part is: `_rels/.rels` says, `xl/workbook.xml` by default. */
export async function findWorkbookPart(zip: ZipArchive): Promise<string | undefined> {
  const root = await readRelationships(zip, '');
  const main = root.find((r) => r.type.endsWith(REL_TYPE.officeDocument));
  for (const candidate of [main?.target, 'xl/workbook.xml']) {
    if (candidate && zip.entry(candidate)) return candidate;
  }
  return undefined;
}

/** A sheet as `workbook.xml` lists it, in the workbook's order. */
export interface WorkbookSheet {
  name: string;
  state: 'visible' | 'hidden' | 'veryHidden';
  /** Path of the worksheet part, or undefined for a chart sheet or a dangling reference. */
  partPath: string | undefined;
}

/** What `workbook.xml` and its relationships say: sheets, date system, where the shared parts are. */
export interface WorkbookInfo {
  sheets: WorkbookSheet[];
  date1904: boolean;
  sharedStringsPath: string | undefined;
  stylesPath: string | undefined;
}

/** Reads `workbook.xml` and its relationships. */
export async function readWorkbook(zip: ZipArchive, workbookPath: string): Promise<WorkbookInfo> {
  const relationships = await readRelationships(zip, workbookPath);
  const byId = new Map(relationships.map((r) => [r.id, r]));
  const listed: { name: string; state: string; relId: string | undefined }[] = [];
  let date1904 = false;
  await parseXmlPart(zip.entry(workbookPath)!, {
    open(name, a) {
      if (name === 'workbookPr') date1904 = a['date1904'] === '1' || a['date1904'] === 'true';
      else if (name === 'sheet') {
        // The relationship id is `r:id`, whatever prefix the file gives the namespace.
        const relKey = Object.keys(a).find((key) => key === 'id' || key.endsWith(':id'));
        listed.push({ name: a['name'] ?? '', state: a['state'] ?? 'visible', relId: relKey && a[relKey] });
      }
    },
  });
  const sheets: WorkbookSheet[] = listed.map(({ name, state, relId }) => {
    const rel = relId === undefined ? undefined : byId.get(relId);
    return {
      name,
      state: state === 'hidden' || state === 'veryHidden' ? state : 'visible',
      partPath: rel?.type.endsWith(REL_TYPE.worksheet) ? rel.target : undefined,
    };
  });
  const partOf = (suffix: string, fallback: string): string | undefined => {
    const path = relationships.find((r) => r.type.endsWith(suffix))?.target ?? fallback;
    return zip.entry(path) ? path : undefined;
  };
  return {
    sheets,
    date1904,
    sharedStringsPath: partOf(REL_TYPE.sharedStrings, 'xl/sharedStrings.xml'),
    stylesPath: partOf(REL_TYPE.styles, 'xl/styles.xml'),
  };
}

/** Reads the shared strings table; rich text runs are joined, phonetic guides left out. */
export async function readSharedStrings(zip: ZipArchive, path: string | undefined): Promise<string[]> {
  const strings: string[] = [];
  if (path === undefined) return strings;
  let current = '';
  let inPhonetic = false;
  let capturing = false;
  await parseXmlPart(zip.entry(path)!, {
    open(name) {
      if (name === 'si') current = '';
      else if (name === 't') capturing = !inPhonetic;
      else if (name === 'rPh') inPhonetic = true;
    },
    text(text) {
      if (capturing) current += text;
    },
    close(name) {
      if (name === 't') capturing = false;
      else if (name === 'rPh') inPhonetic = false;
      else if (name === 'si') strings.push(decodeOoxmlEscapes(current));
    },
  });
  return strings;
}

// Built-in number formats that show a date or time (ECMA-376 18.8.30, plus the East Asian ids).
const BUILT_IN_DATE_FORMATS = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54,
  55, 56, 57, 58,
]);

// Built-in number formats that a results file keeps (ECMA-376 18.8.30): amounts and counts.
const BUILT_IN_NUMBER_FORMATS: ReadonlyMap<number, string> = new Map([
  [1, '0'],
  [2, '0.00'],
  [3, '#,##0'],
  [4, '#,##0.00'],
  [9, '0%'],
  [10, '0.00%'],
  [11, '0.00E+00'],
  [49, '@'],
]);

/** For each cell style index (`s` of a cell), whether its number format shows a date. */
export async function readDateStyles(zip: ZipArchive, path: string | undefined): Promise<boolean[]> {
  return (await readCellFormats(zip, path)).map((format) => format.isDate);
}

/**
 * The number format of a cell style: its code (`#,##0.00`; '' for General, also when a workbook
 * spells it out as a format of its own, as LibreOffice does) and whether it is a date.
 */
export interface CellFormat {
  code: string;
  isDate: boolean;
}

/** For each cell style index (`s` of a cell), its number format. */
export async function readCellFormats(zip: ZipArchive, path: string | undefined): Promise<CellFormat[]> {
  const formats: CellFormat[] = [];
  if (path === undefined) return formats;
  const customFormats = new Map<number, string>();
  const styleFormats: number[] = [];
  // Only <numFmts> and <cellXfs> count: <dxfs> (conditional formats) and <cellStyleXfs> do not.
  let section = '';
  await parseXmlPart(zip.entry(path)!, {
    open(name, a) {
      if (name === 'numFmts' || name === 'cellXfs') section = name;
      else if (name === 'numFmt' && section === 'numFmts') {
        customFormats.set(Number(a['numFmtId']), a['formatCode'] ?? '');
      } else if (name === 'xf' && section === 'cellXfs') styleFormats.push(Number(a['numFmtId'] ?? 0));
    },
    close(name) {
      if (name === section) section = '';
    },
  });
  for (const id of styleFormats) {
    const custom = customFormats.get(id);
    formats.push(
      custom === undefined
        ? { code: BUILT_IN_NUMBER_FORMATS.get(id) ?? '', isDate: BUILT_IN_DATE_FORMATS.has(id) }
        : { code: /^\s*general\s*$/i.test(custom) ? '' : custom, isDate: isDateFormatCode(custom) },
    );
  }
  return formats;
}

/** Whether a number format code shows a date or time (`yyyy-mm-dd`, `d/m/yy h:mm`, ...). */
export function isDateFormatCode(code: string): boolean {
  const bare = code
    .replace(/"[^"]*"/g, '') // literal text
    .replace(/\\./g, '') // escaped characters
    .replace(/[_*]./g, '') // padding and fill
    .replace(/\[[^\]]*\]/g, ''); // colours, conditions, locales, elapsed time
  return /[dmyhs]/i.test(bare) && !/^general$/i.test(bare.trim());
}

/** Excel writes some characters as `_x000D_`; this turns them back. */
export function decodeOoxmlEscapes(text: string): string {
  if (!text.includes('_x')) return text;
  return text.replace(/_x([0-9A-Fa-f]{4})_/g, (_match, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

/** Resolves a relationship target against the part that holds it (`xl/workbook.xml` + `worksheets/sheet1.xml`). */
export function resolvePartPath(fromPart: string, target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const base = fromPart.slice(0, fromPart.lastIndexOf('/') + 1);
  const parts: string[] = [];
  for (const segment of `${base}${target}`.split('/')) {
    if (segment === '..') parts.pop();
    else if (segment !== '.' && segment !== '') parts.push(segment);
  }
  return parts.join('/');
}

// The floor for CSV: csv-parse piped into csv-stringify, nothing else.
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify';

const [input, output] = process.argv.slice(2);
await pipeline(createReadStream(input), parse({ bom: true }), stringify(), createWriteStream(output));

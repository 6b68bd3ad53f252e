// The floor for XLSX: the exceljs streaming reader feeding the exceljs streaming writer.
import ExcelJS from 'exceljs';

const [input, output] = process.argv.slice(2);
const reader = new ExcelJS.stream.xlsx.WorkbookReader(input, {
  sharedStrings: 'cache',
  worksheets: 'emit',
  hyperlinks: 'ignore',
  styles: 'ignore',
  entries: 'ignore',
});
const writer = new ExcelJS.stream.xlsx.WorkbookWriter({
  filename: output,
  useSharedStrings: false,
  useStyles: false,
});
const sheet = writer.addWorksheet('Results');
for await (const worksheet of reader) {
  for await (const row of worksheet) sheet.addRow(row.values.slice(1)).commit();
  break;
}
sheet.commit();
await writer.commit();

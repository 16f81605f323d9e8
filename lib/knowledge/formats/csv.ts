import { parse } from 'csv-parse/sync';
import type { Block, DocumentModel } from '../document';
import { csvDelimiter } from './sniff';

/**
 * A CSV file (a price list, a product table) with csv-parse: quoted values, embedded delimiters and line breaks, a
 * byte order mark. The delimiter is the one its first lines agree on (comma, semicolon, tab or bar), the first row
 * names the columns, and every other row becomes a table row read as "Product: Lamp; Price: 12 €", so a row found
 * alone still says what each value is.
 */
export function readCsv(text: string): DocumentModel {
  const delimiter = csvDelimiter(text) ?? ',';
  const rows = parse(text, {
    delimiter,
    bom: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    trim: true,
  }) as string[][];
  const [header, ...body] = rows;
  if (!header) return { blocks: [] };
  const blocks: Block[] = body.map((cells) => ({ kind: 'table_row', cells, header }));
  // A file of one row has no header to speak of: its values are the content.
  if (!body.length) blocks.push({ kind: 'table_row', cells: header });
  return { blocks };
}

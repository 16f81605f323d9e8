import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow } from 'docx';
import PDFDocument from 'pdfkit';
import { http, type HttpResult, waitUntil } from './helpers';

export { makePng } from './browser';

/**
 * Documents made in the test by the libraries people's own tools use (pdfkit for PDF, docx for Word), and the calls
 * that upload them and follow their reading (docs/decisions/145-documents-in.md).
 */

/** A PDF from pdfkit: `draw` writes its pages (`doc.addPage()` between them). */
export function makePdf(
  draw: (doc: PDFKit.PDFDocument) => void,
  opts: PDFKit.PDFDocumentOptions = {},
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument(opts);
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    draw(doc);
    doc.end();
  });
}

/** A two-page lamp manual: a title, "Installation" on page 1, "Wi-Fi" on page 2 (headings by their larger size). */
export function twoPagePdf(): Promise<Buffer> {
  return makePdf(
    (d) => {
      d.fontSize(22).text('Lamp manual');
      d.fontSize(16).text('Installation');
      d.fontSize(11).text('Screw the bulb in clockwise until it stops, then plug the lamp into the wall socket.');
      d.addPage();
      d.fontSize(16).text('Wi-Fi');
      d.fontSize(11).text('Hold the button for five seconds to pair the purple axolotl lamp with your router.');
    },
    { info: { Title: 'Lamp manual' } },
  );
}

/** A Word file with Heading 1–3, a paragraph, a bullet and a table whose first row is marked as its header. */
export function headingsDocx(): Promise<Buffer> {
  const cell = (text: string) => new TableCell({ children: [new Paragraph(text)] });
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: 'Kettle guide', heading: HeadingLevel.HEADING_1 }),
          new Paragraph({ text: 'Descaling', heading: HeadingLevel.HEADING_2 }),
          new Paragraph('Fill the kettle with vinegar and water, boil it, and rinse it three times.'),
          new Paragraph({ text: 'Spare parts', heading: HeadingLevel.HEADING_3 }),
          new Paragraph({ text: 'Ask the shop for the turquoise lid.', bullet: { level: 0 } }),
          new Table({
            rows: [
              new TableRow({ tableHeader: true, children: [cell('Part'), cell('Price')] }),
              new TableRow({ children: [cell('Turquoise lid'), cell('7 €')] }),
            ],
          }),
        ],
      },
    ],
  });
  return Packer.toBuffer(doc);
}

/** Uploads a file as a browser or `curl -F` would: multipart/form-data, the file in the field `file`. */
export function uploadFile(
  key: string,
  file: { name: string; bytes: Buffer | string; type?: string },
  fields: Record<string, string> = {},
  headers: Record<string, string> = {},
  baseUrl?: string,
): Promise<HttpResult> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  form.set('file', new Blob([file.bytes], { type: file.type ?? 'application/octet-stream' }), file.name);
  return httpForm('/v1/api/knowledge/files', form, { 'X-Bot-Key': key, ...headers }, baseUrl);
}

/** A multipart POST through the test's http helper (fetch writes the form and its boundary). */
export async function httpForm(
  path: string,
  form: FormData,
  headers: Record<string, string>,
  baseUrl?: string,
): Promise<HttpResult> {
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  const rawBody = Buffer.from(await request.arrayBuffer());
  return http(path, {
    method: 'POST',
    rawBody,
    headers: { 'Content-Type': request.headers.get('content-type')!, ...headers },
    baseUrl,
  });
}

/** Follows a source to the end of its reading, as an integrator would: `indexed` or `failed`. */
export async function readingDone(key: string, sourceId: string, baseUrl?: string, timeoutMs = 30_000) {
  return waitUntil(
    `the reading of ${sourceId}`,
    async () => {
      const res = await http(`/v1/api/knowledge/${encodeURIComponent(sourceId)}?passages=true`, { key, baseUrl });
      return res.status === 200 && res.body.status !== 'reading' ? res.body : undefined;
    },
    timeoutMs,
  );
}

import { extractPage } from '../../crawl/extract';
import { LIMITS } from '../../limits';
import { type DocumentModel, readPlainText, renderDocument } from '../document';
import { readCsv } from './csv';
import { readMarkdown } from './markdown';
import { readPdf } from './pdf';
import { type FileFormat, decodeText } from './sniff';
import { UnreadableFile } from './unreadable';

export { UnreadableFile };

export interface ReadOptions {
  maxPages?: number;
}

/** Word files: mammoth turns the document into clean HTML (headings from Word's heading styles), read as HTML. */
async function readDocx(bytes: Buffer): Promise<DocumentModel> {
  const mammoth = await import('mammoth');
  let html: string;
  try {
    ({ value: html } = await mammoth.convertToHtml({ buffer: bytes }));
  } catch (err) {
    throw new UnreadableFile(
      'corrupt',
      `This Word file could not be read (${String((err as Error).message ?? err).slice(0, 120)}): it may be damaged`,
    );
  }
  const page = extractPage(`<body>${html}</body>`, 'about:blank', { whole: true });
  const first = page.blocks.find((b) => b.kind === 'heading' && b.level === 1);
  return { blocks: page.blocks, ...(first && first.kind === 'heading' ? { title: first.text } : {}) };
}

function readHtml(bytes: Buffer): DocumentModel {
  const page = extractPage(decodeText(bytes) ?? '', 'about:blank', { whole: true });
  return { blocks: page.blocks, ...(page.title ? { title: page.title } : {}) };
}

function text(bytes: Buffer): string {
  const decoded = decodeText(bytes);
  if (decoded === null) throw new UnreadableFile('corrupt', 'This file is not text');
  return decoded.replace(/^\uFEFF/, '');
}

/**
 * Reads a file whose format `sniffFile` decided into the document model. Throws `UnreadableFile` with a reason for
 * its owner: an encrypted PDF, one with no text layer, a damaged file, too many pages, nothing to read, or more text
 * than a source may hold.
 */
export async function readDocument(bytes: Buffer, format: FileFormat, opts: ReadOptions = {}): Promise<DocumentModel> {
  let doc: DocumentModel;
  switch (format) {
    case 'pdf':
      doc = await readPdf(bytes, { maxPages: opts.maxPages ?? LIMITS.knowledgeFiles.maxPages });
      break;
    case 'docx':
      doc = await readDocx(bytes);
      break;
    case 'html':
      doc = readHtml(bytes);
      break;
    case 'markdown':
      doc = readMarkdown(text(bytes));
      break;
    case 'csv':
      doc = readCsv(text(bytes));
      break;
    case 'text':
      doc = readPlainText(text(bytes));
      break;
  }
  const rendered = renderDocument(doc);
  if (!rendered.trim()) throw new UnreadableFile('empty', 'There is no text in this file');
  if (rendered.length > LIMITS.knowledgeFiles.textChars) {
    throw new UnreadableFile(
      'too_much_text',
      `This file holds more than ${LIMITS.knowledgeFiles.textChars / 1_000_000} million characters of text: split it into smaller files`,
    );
  }
  return doc;
}

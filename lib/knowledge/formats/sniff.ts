import { TextDecoder } from 'node:util';

/**
 * What an uploaded file is, judged by its bytes (docs/decisions/145-documents-in.md): binary formats by their magic
 * bytes (the `file-type` package, which also looks inside a ZIP to tell a Word file from a spreadsheet), text formats
 * by sniffing their content. The file's name and declared type are hints only, used where content alone cannot
 * decide (a short plain text that could also be Markdown): a PDF named `.docx` is read as a PDF, a PNG named `.pdf`
 * is refused as an image.
 */

export type FileFormat = 'pdf' | 'docx' | 'html' | 'markdown' | 'csv' | 'text';

export const FORMAT_TYPES: Record<FileFormat, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  html: 'text/html',
  markdown: 'text/markdown',
  csv: 'text/csv',
  text: 'text/plain',
};

export type Sniffed = { format: FileFormat; contentType: string } | { refused: string };

const ACCEPTED = 'PDF, Word (.docx), Markdown, HTML, CSV or plain text';

/** Binary types people may try, with what to tell them. */
function refusal(ext: string, mime: string): string {
  if (mime.startsWith('image/')) return `This is an image (${ext.toUpperCase()}), not a document: upload ${ACCEPTED}`;
  if (ext === 'cfb' || ext === 'doc')
    return `This is an old Word (.doc) or Office file: save it as .docx and upload again`;
  if (ext === 'xlsx' || ext === 'ods' || ext === 'xls') return `This is a spreadsheet: save it as CSV and upload again`;
  if (ext === 'pptx' || ext === 'odp') return `This is a presentation: save it as PDF and upload again`;
  if (ext === 'odt' || ext === 'rtf')
    return `This is a ${ext.toUpperCase()} document: save it as .docx or PDF and upload again`;
  return `This file is ${mime} (${ext}), not a document the agent can read: upload ${ACCEPTED}`;
}

/** UTF-8 (with or without BOM), UTF-16 with a BOM, else Windows-1252; null when the bytes are not text at all. */
export function decodeText(bytes: Buffer): string | null {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes);
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes);
  // NUL bytes (or most other C0 controls) do not occur in text files: this is binary.
  const head = bytes.subarray(0, 64 * 1024);
  let controls = 0;
  for (const b of head) {
    if (b === 0) return null;
    if (b < 0x09 || (b > 0x0d && b < 0x20 && b !== 0x1b)) controls++;
  }
  if (controls > head.length / 100) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}

const HTML_START = /^\s*(?:<\?xml[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html|head|body)[\s>]/i;
const HTML_TAGS = /<(?:p|div|h[1-6]|ul|ol|li|table|tr|td|br|span|a\s)[\s>/]/gi;
const MARKDOWN_SIGNS = [
  /^#{1,6}\s+\S/m,
  /^```/m,
  /^\s*[-*+]\s+\S/m,
  /^\s*\d+\.\s+\S/m,
  /\[[^\]]+\]\([^)]+\)/,
  /^\|?\s*:?-{3,}:?\s*\|/m,
  /\*\*[^*]+\*\*/,
];

/** The delimiter a CSV uses, when the text's first lines agree on one (same count on every line, at least one). */
export function csvDelimiter(text: string): string | null {
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .filter((l) => l.trim())
    .slice(0, 20);
  if (lines.length < 2) return null;
  let best: { d: string; n: number } | null = null;
  for (const d of [',', ';', '\t', '|']) {
    // Delimiters inside quoted values do not count.
    const counts = lines.map((l) => l.replace(/"(?:[^"]|"")*"/g, '').split(d).length - 1);
    if (counts[0] >= 1 && counts.every((c) => c === counts[0]) && (!best || counts[0] > best.n))
      best = { d, n: counts[0] };
  }
  return best?.d ?? null;
}

function hintOf(name: string | undefined, declared: string | undefined): FileFormat | undefined {
  const ext = /\.([A-Za-z0-9]+)$/.exec(name ?? '')?.[1]?.toLowerCase();
  if (ext === 'md' || ext === 'markdown' || declared === 'text/markdown') return 'markdown';
  if (ext === 'csv' || ext === 'tsv' || declared === 'text/csv') return 'csv';
  if (ext === 'html' || ext === 'htm' || declared === 'text/html') return 'html';
  if (ext === 'txt' || declared === 'text/plain') return 'text';
  return undefined;
}

/** Judges a file by its bytes; the name and declared type only break ties between text formats. */
export async function sniffFile(bytes: Buffer, hints: { name?: string; declaredType?: string } = {}): Promise<Sniffed> {
  if (!bytes.length) return { refused: 'The file is empty' };
  // file-type is an ES module; loaded on first use.
  const { fileTypeFromBuffer } = await import('file-type');
  const found = await fileTypeFromBuffer(bytes);
  if (found) {
    if (found.ext === 'pdf') return { format: 'pdf', contentType: FORMAT_TYPES.pdf };
    if (found.ext === 'docx') return { format: 'docx', contentType: FORMAT_TYPES.docx };
    // Text-based types file-type also recognizes are sniffed below as text.
    if (!['xml', 'html', 'svg', 'csv', 'txt'].includes(found.ext)) return { refused: refusal(found.ext, found.mime) };
  }
  // A PDF whose header is not at byte 0 (some generators put junk first) is still a PDF to readers.
  if (bytes.subarray(0, 1024).includes('%PDF-')) return { format: 'pdf', contentType: FORMAT_TYPES.pdf };
  const text = decodeText(bytes);
  if (text === null)
    return { refused: `This file is not a document the agent can read (binary data): upload ${ACCEPTED}` };
  const head = text.slice(0, 64 * 1024);
  const hint = hintOf(hints.name, hints.declaredType?.split(';')[0].trim().toLowerCase());
  const text_ = (format: FileFormat) => ({ format, contentType: `${FORMAT_TYPES[format]}; charset=utf-8` });
  if (HTML_START.test(head) || (hint === 'html' && (head.match(HTML_TAGS)?.length ?? 0) > 0)) return text_('html');
  if ((head.match(HTML_TAGS)?.length ?? 0) >= 5 && !MARKDOWN_SIGNS.slice(0, 2).some((re) => re.test(head))) {
    return text_('html');
  }
  const delimiter = csvDelimiter(head);
  const markdown = MARKDOWN_SIGNS.filter((re) => re.test(head)).length;
  // Without the hint, only short lines that agree on a delimiter read as a table (prose has commas too).
  const lines = head.split('\n').filter((l) => l.trim());
  const shortLines = lines.length >= 3 && lines.every((l) => l.length <= 300);
  if (delimiter && (hint === 'csv' || (markdown === 0 && shortLines))) return text_('csv');
  if (hint === 'markdown' || markdown >= 2 || (markdown === 1 && hint !== 'text')) return text_('markdown');
  return text_('text');
}

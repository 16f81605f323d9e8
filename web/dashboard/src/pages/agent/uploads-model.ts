/**
 * The files being added to an agent's knowledge, as the Knowledge tab shows them (no DOM here): each file is
 * uploading (with how much is sent), then reading, then indexed with its passage count, or failed and why.
 */

export type UploadState =
  | { step: 'uploading'; sent: number; total: number }
  | { step: 'reading'; sourceId: string }
  | { step: 'indexed'; sourceId: string; passages: number; pages: number | null }
  | { step: 'failed'; reason: string; sourceId?: string };

export interface UploadRow {
  key: string;
  name: string;
  size: number;
  state: UploadState;
}

/** The line a row shows under its name. */
export function describeUpload(row: UploadRow): string {
  const s = row.state;
  switch (s.step) {
    case 'uploading':
      return `Uploading… ${s.total ? Math.floor((100 * s.sent) / s.total) : 0}%`;
    case 'reading':
      return 'Reading…';
    case 'indexed':
      return `Indexed: ${s.passages} passage${s.passages === 1 ? '' : 's'}${
        s.pages ? ` from ${s.pages} page${s.pages === 1 ? '' : 's'}` : ''
      }`;
    case 'failed':
      return `Failed: ${s.reason}`;
  }
}

/** A source's reading as the API reports it, read into a row's state (`null` while it is still reading). */
export function stateOfSource(source: {
  source_id: string;
  status: string;
  reason: string | null;
  fragments: number;
  file: { pages: number | null } | null;
}): UploadState | null {
  if (source.status === 'indexed') {
    return {
      step: 'indexed',
      sourceId: source.source_id,
      passages: source.fragments,
      pages: source.file?.pages ?? null,
    };
  }
  if (source.status === 'failed') {
    return { step: 'failed', sourceId: source.source_id, reason: source.reason ?? 'The file could not be read' };
  }
  return null;
}

/** Human size: 512 B, 12 KB, 3.4 MB. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;
}

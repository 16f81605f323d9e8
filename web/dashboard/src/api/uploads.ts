import type { KnowledgeFileAcceptedView } from '../../../shared/contract';
import type { Failure } from './client';

/** What the API answers an upload with (202): the source is being read (the contract's). */
export type FileAccepted = KnowledgeFileAcceptedView;

/**
 * Uploads one file into an agent's knowledge as multipart/form-data, telling how much of it has been sent. An
 * XMLHttpRequest, because fetch() reports no upload progress.
 */
export function uploadKnowledgeFile(
  botId: string,
  file: File,
  onProgress: (sent: number, total: number) => void,
): Promise<{ ok: true; value: FileAccepted } | ({ ok: false } & Failure)> {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/v1/dashboard/bots/${encodeURIComponent(botId)}/knowledge/files`);
    xhr.withCredentials = true;
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onerror = () =>
      resolve({
        ok: false,
        status: 0,
        code: 'network',
        message: 'The service cannot be reached. Check your connection.',
      });
    xhr.onload = () => {
      let json: Record<string, unknown> | undefined;
      try {
        json = JSON.parse(xhr.responseText) as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      if (xhr.status >= 200 && xhr.status < 300) return resolve({ ok: true, value: json as unknown as FileAccepted });
      resolve({
        ok: false,
        status: xhr.status,
        code: typeof json?.code === 'string' ? json.code : 'error',
        message: typeof json?.error === 'string' ? json.error : `The service answered ${xhr.status}.`,
      });
    };
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}

/** The address that downloads a file source's original. */
export const knowledgeFileUrl = (botId: string, sourceId: string) =>
  `/v1/dashboard/bots/${encodeURIComponent(botId)}/knowledge/${encodeURIComponent(sourceId)}/file`;

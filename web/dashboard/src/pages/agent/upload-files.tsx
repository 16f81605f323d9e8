import { useEffect, useRef, useState } from 'preact/hooks';
import { agents } from '../../api/agents';
import { uploadKnowledgeFile } from '../../api/uploads';
import { Panel } from '../../ui/page';
import { Badge } from '../../ui/status';
import { type UploadRow, type UploadState, describeUpload, formatSize, stateOfSource } from './uploads-model';
import type { TabProps } from './tab';

/** How often a file being read is asked about. */
const READING_POLL_MS = 1_000;
/** The formats the server reads (it judges a file by its content: this only guides the picker). */
const ACCEPT = '.pdf,.docx,.md,.markdown,.html,.htm,.csv,.tsv,.txt,application/pdf,text/*';

const TONE: Record<UploadState['step'], 'info' | 'success' | 'danger' | 'neutral'> = {
  uploading: 'neutral',
  reading: 'info',
  indexed: 'success',
  failed: 'danger',
};

/**
 * Adding files to the agent's knowledge: several dropped (or picked) at once, each uploaded and then followed through
 * its reading, its row saying where it is — uploading, reading, indexed with its passage count, or failed and why.
 */
export function UploadFiles(props: TabProps & { onIndexed: () => void }) {
  const [rows, setRows] = useState<UploadRow[]>([]);
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const alive = useRef(true);
  useEffect(() => () => void (alive.current = false), []);

  const update = (key: string, state: UploadState) => {
    if (alive.current) setRows((all) => all.map((r) => (r.key === key ? { ...r, state } : r)));
  };

  async function follow(key: string, sourceId: string) {
    while (alive.current) {
      await new Promise((r) => setTimeout(r, READING_POLL_MS));
      const res = await agents.source(props.bot.id, sourceId);
      if (!res.ok) {
        if (res.status === 404) return update(key, { step: 'failed', reason: 'The source was deleted meanwhile' });
        continue; // a blip: ask again
      }
      const state = stateOfSource(res.value);
      if (state) {
        update(key, state);
        if (state.step === 'indexed') props.onIndexed();
        return;
      }
    }
  }

  async function send(key: string, file: File) {
    const res = await uploadKnowledgeFile(props.bot.id, file, (sent, total) =>
      update(key, { step: 'uploading', sent, total }),
    );
    if (!res.ok) return update(key, { step: 'failed', reason: res.message });
    update(key, { step: 'reading', sourceId: res.value.source_id });
    await follow(key, res.value.source_id);
  }

  function add(files: FileList | null) {
    if (!files?.length) return;
    const added = [...files].map((file, i) => ({
      file,
      row: {
        key: `${Date.now()}-${i}-${file.name}`,
        name: file.name,
        size: file.size,
        state: { step: 'uploading', sent: 0, total: file.size } as UploadState,
      },
    }));
    setRows((all) => [...added.map((a) => a.row), ...all]);
    // Each file on its own: one that fails stops none of the others.
    for (const { file, row } of added) void send(row.key, file);
  }

  return (
    <Panel
      title="Add files"
      id="add-files"
      description="PDF, Word (.docx), Markdown, HTML, CSV or text: each is read and split into passages the agent answers from."
    >
      <div
        class={`dropzone${over ? ' dropzone-over' : ''}`}
        data-testid="dropzone"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          add(e.dataTransfer?.files ?? null);
        }}
      >
        <p>Drop files here, or</p>
        <label class="btn btn-secondary btn-small" for="knowledge-files">
          Choose files
        </label>
        <input
          id="knowledge-files"
          ref={input}
          class="visually-hidden"
          type="file"
          multiple
          accept={ACCEPT}
          onChange={(e) => {
            add((e.currentTarget as HTMLInputElement).files);
            if (input.current) input.current.value = '';
          }}
        />
      </div>
      {rows.length > 0 && (
        <ul class="list upload-list" aria-label="Files being added" aria-live="polite" data-testid="uploads">
          {rows.map((row) => (
            <li key={row.key} data-testid="upload-row" data-step={row.state.step}>
              <div class="list-row">
                <div>
                  <span class="cell-main">{row.name}</span>
                  <span class="cell-sub">
                    <Badge tone={TONE[row.state.step]}>{row.state.step}</Badge> {formatSize(row.size)} ·{' '}
                    <span data-testid="upload-status">{describeUpload(row)}</span>
                  </span>
                </div>
              </div>
              {row.state.step === 'uploading' && (
                <progress max={row.state.total || 1} value={row.state.sent} aria-label={`Uploading ${row.name}`} />
              )}
            </li>
          ))}
        </ul>
      )}
    </Panel>
  );
}

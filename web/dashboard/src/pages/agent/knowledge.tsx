import { useEffect, useRef, useState } from 'preact/hooks';
import { type Scan, type Source, agents } from '../../api/agents';
import {
  Badge,
  Button,
  Empty,
  ErrorBox,
  Field,
  Loaded,
  Loading,
  Panel,
  Time,
  formatNumber,
  useAction,
  ConfirmDelete,
  RefreshButton,
  useResource,
  valueOf,
} from '../../ui';
import { usePolling } from '../../use-polling';
import type { TabProps } from './tab';

/** How often the scan list is read while a scan runs (the crawler updates its counters per page). */
const SCAN_POLL_MS = 1500;
const SOURCES_PER_PAGE = 20;

/** The agent's knowledge: site scans with live progress, texts added by hand, and every source, page by page. */
export function KnowledgeTab(props: TabProps) {
  // Bumped when something changed the sources (a text added, a scan finished), to read the list again.
  const [version, setVersion] = useState(0);
  return (
    <>
      {props.admin && (
        <div class="grid-2">
          <ScanPanel {...props} onFinished={() => setVersion((v) => v + 1)} />
          <AddText {...props} onAdded={() => setVersion((v) => v + 1)} />
        </div>
      )}
      <Sources {...props} version={version} />
    </>
  );
}

function ScanPanel(props: TabProps & { onFinished: () => void }) {
  const { bot } = props;
  const scans = useResource(() => agents.scans(bot.id), [bot.id]);
  const [url, setUrl] = useState('');
  const [maxPages, setMaxPages] = useState('50');
  const [refreshDays, setRefreshDays] = useState('0');
  // From a start until the new scan shows up in the list (its row is written a moment after the 202): the id of
  // the newest scan before it, and when it was asked for.
  const [expecting, setExpecting] = useState<{ after: string | undefined; at: number } | undefined>();
  const start = useAction();
  const list = scans.data?.scans ?? [];
  const latest = list[0];
  const running = Boolean(scans.data?.running) || latest?.status === 'scanning';
  const watching = running || expecting !== undefined;
  const wasWatching = useRef(false);

  useEffect(() => {
    if (!expecting || scans.state === 'loading') return;
    const appeared = running || (latest !== undefined && latest.id !== expecting.after);
    if (appeared || Date.now() - expecting.at > 30_000) setExpecting(undefined);
  }, [scans.resource]);

  // Poll while a scan runs (or is about to show up); stop when it is done.
  usePolling(
    async () => {
      scans.reload();
      return 'ok';
    },
    { everyMs: SCAN_POLL_MS, waitFirst: true, enabled: watching },
    [],
  );

  // A scan that ended (even one too quick to be seen running) changed the sources.
  useEffect(() => {
    if (wasWatching.current && !watching) props.onFinished();
    wasWatching.current = watching;
  }, [watching]);

  async function submit(event: Event) {
    event.preventDefault();
    const before = latest?.id;
    const res = await start.run(() =>
      agents.startScan(bot.id, {
        url: url.trim(),
        max_pages: Number(maxPages) || undefined,
        refresh_days: Number(refreshDays),
      }),
    );
    if (res.ok) {
      setExpecting({ after: before, at: Date.now() });
      scans.reload();
    } else if (res.code === 'conflict') {
      scans.reload();
    }
  }

  return (
    <Panel
      title="Scan a website"
      id="scan"
      description="Reads the pages of a site (following its links, honouring robots.txt) and keeps their text."
    >
      {watching ? (
        latest && latest.status === 'scanning' ? (
          <ScanProgress scan={latest} />
        ) : (
          <Loading label="Starting the scan…" />
        )
      ) : (
        <form onSubmit={(e) => void submit(e)}>
          <Field id="scan-url" label="Start address">
            <input
              id="scan-url"
              type="url"
              required
              placeholder="https://www.example.com/"
              value={url}
              onInput={(e) => setUrl(valueOf(e))}
            />
          </Field>
          <div class="form-row">
            <Field id="scan-max" label="Pages at most" hint="1 to 150">
              <input
                id="scan-max"
                type="number"
                min={1}
                max={150}
                value={maxPages}
                onInput={(e) => setMaxPages(valueOf(e))}
              />
            </Field>
            <Field id="scan-refresh" label="Read again every" hint="Days; 0 = never">
              <input
                id="scan-refresh"
                type="number"
                min={0}
                max={180}
                value={refreshDays}
                onInput={(e) => setRefreshDays(valueOf(e))}
              />
            </Field>
          </div>
          {start.failure && (
            <ErrorBox
              failure={
                start.failure.code === 'conflict'
                  ? { ...start.failure, message: 'A scan of this agent is already running.' }
                  : start.failure
              }
            />
          )}
          <div class="form-actions">
            <Button type="submit" variant="primary" busy={Boolean(start.busy)} busyLabel="Starting…">
              Start scan
            </Button>
          </div>
        </form>
      )}
      <p class="visually-hidden" aria-live="polite">
        {running ? 'A scan is running.' : latest ? scanSummary(latest) : ''}
      </p>
      {scans.state === 'error' && <ErrorBox failure={scans.failure} onRetry={scans.reload} />}
      {scans.state === 'loading' && !scans.data && <Loading label="Loading scans…" />}
      {list.length > 0 && <RecentScans scans={running ? list.slice(1) : list} />}
    </Panel>
  );
}

function scanSummary(scan: Scan): string {
  if (scan.status === 'scanning') return 'Scanning';
  if (scan.status === 'failed') return `The scan of ${scan.url} failed.`;
  return `Scan done: ${scan.pages_indexed} pages indexed.`;
}

function ScanProgress(props: { scan: Scan }) {
  const { scan } = props;
  // The crawl ends when nothing is queued or the page budget is spent: estimate against whichever comes first.
  const total = Math.max(1, Math.min(scan.max_pages + scan.pages_skipped, scan.pages_fetched + scan.pages_queued));
  const done = Math.min(scan.pages_fetched, total);
  const percent = Math.round((done / total) * 100);
  return (
    <div class="scan-progress" data-testid="scan-progress">
      <div class="scan-progress-head">
        <Badge tone="info">Scanning</Badge>
        <span class="cell-main">{scan.url}</span>
      </div>
      <progress
        max={total}
        value={done}
        aria-label="Scan progress"
        aria-valuetext={`${scan.pages_fetched} pages fetched, ${scan.pages_queued} queued`}
      >
        {percent}%
      </progress>
      <ul class="stats" data-testid="scan-stats">
        <li>
          <strong data-testid="scan-fetched">{formatNumber(scan.pages_fetched)}</strong> fetched
        </li>
        <li>
          <strong data-testid="scan-indexed">{formatNumber(scan.pages_indexed)}</strong> indexed
        </li>
        <li>
          <strong data-testid="scan-queued">{formatNumber(scan.pages_queued)}</strong> queued
        </li>
        {scan.pages_skipped > 0 && (
          <li>
            <strong>{formatNumber(scan.pages_skipped)}</strong> skipped
          </li>
        )}
      </ul>
      {scan.last_url && (
        <p class="muted small scan-last">
          Reading <span class="break">{scan.last_url}</span>
        </p>
      )}
    </div>
  );
}

function RecentScans(props: { scans: Scan[] }) {
  if (props.scans.length === 0) return null;
  return (
    <div class="recent-scans">
      <h3 class="subheading">Recent scans</h3>
      <ul class="list" aria-label="Recent scans" data-testid="recent-scans">
        {props.scans.slice(0, 5).map((scan) => (
          <li key={scan.id}>
            <div class="list-row">
              <div>
                <span class="cell-main">{scan.url}</span>
                <span class="cell-sub">
                  <Time ms={scan.started_at} relative /> · {formatNumber(scan.pages_indexed)} indexed of{' '}
                  {formatNumber(scan.pages_fetched)} fetched
                  {scan.pages_skipped ? `, ${formatNumber(scan.pages_skipped)} skipped` : ''}
                </span>
                {scan.error && <span class="cell-sub text-error">{scan.error}</span>}
              </div>
              <Badge tone={scan.status === 'done' ? 'success' : scan.status === 'failed' ? 'danger' : 'info'}>
                {scan.status === 'done' ? 'Done' : scan.status === 'failed' ? 'Failed' : 'Scanning'}
              </Badge>
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}

function AddText(props: TabProps & { onAdded: () => void }) {
  const [title, setTitle] = useState('');
  const [text, setText] = useState('');
  const [added, setAdded] = useState('');
  const action = useAction();

  async function submit(event: Event) {
    event.preventDefault();
    setAdded('');
    if (!text.trim()) return;
    const res = await action.run(() => agents.addKnowledge(props.bot.id, { title: title.trim() || undefined, text }));
    if (res.ok) {
      setAdded(`Added “${title.trim() || text.trim().split('\n')[0].slice(0, 60)}”.`);
      setTitle('');
      setText('');
      props.onAdded();
    }
  }

  return (
    <Panel title="Add a text" id="add-text" description="Facts, answers, policies: anything the agent should know.">
      <form onSubmit={(e) => void submit(e)}>
        <Field id="knowledge-title" label="Title" optional hint="Without one, the first line is used.">
          <input id="knowledge-title" maxLength={500} value={title} onInput={(e) => setTitle(valueOf(e))} />
        </Field>
        <Field id="knowledge-text" label="Text">
          <textarea id="knowledge-text" rows={6} required value={text} onInput={(e) => setText(valueOf(e))} />
        </Field>
        {action.failure && <ErrorBox failure={action.failure} />}
        <div class="form-actions">
          <Button type="submit" variant="primary" busy={Boolean(action.busy)} busyLabel="Adding…">
            Add text
          </Button>
          <span class="muted small" aria-live="polite" data-testid="text-added">
            {added}
          </span>
        </div>
      </form>
    </Panel>
  );
}

function Sources(props: TabProps & { version: number }) {
  const { bot } = props;
  // cursors[i] reads page i; the first page has none.
  const [cursors, setCursors] = useState<string[]>(['']);
  const [removed, setRemoved] = useState(0);
  const page = cursors.length - 1;
  const sources = useResource(
    () => agents.knowledge(bot.id, cursors[page] || undefined, SOURCES_PER_PAGE),
    [bot.id, page, props.version, removed],
  );
  const next = sources.data?.next_cursor;

  return (
    <Panel
      title="Sources"
      id="sources"
      description="Everything the agent answers from, in the order it was added."
      actions={<RefreshButton resource={sources} />}
    >
      <Loaded resource={sources.resource} retry={sources.retry} label="Loading sources…">
        {(data) =>
          data.sources.length === 0 && page === 0 ? (
            <Empty title="No knowledge yet">
              <p>Add a text or scan a site: the agent answers only from what it knows.</p>
            </Empty>
          ) : (
            <>
              <ul class="list" aria-label="Knowledge sources" data-testid="sources">
                {data.sources.map((source) => (
                  <SourceRow
                    key={source.source_id}
                    botId={bot.id}
                    source={source}
                    canDelete={props.admin}
                    onRemoved={() => setRemoved((n) => n + 1)}
                  />
                ))}
              </ul>
              {(page > 0 || next) && (
                <nav class="pager" aria-label="Source pages">
                  <Button small disabled={page === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
                    ← Previous
                  </Button>
                  <span>Page {page + 1}</span>
                  <Button small disabled={!next} onClick={() => next && setCursors([...cursors, next])}>
                    Next →
                  </Button>
                </nav>
              )}
            </>
          )
        }
      </Loaded>
    </Panel>
  );
}

function SourceRow(props: { botId: string; source: Source; canDelete: boolean; onRemoved: () => void }) {
  const { source } = props;
  const [confirming, setConfirming] = useState(false);
  const [text, setText] = useState<string | undefined>();
  const remove = useAction();
  const show = useAction();

  async function toggleText() {
    if (text !== undefined) return setText(undefined);
    const res = await show.run(() => agents.source(props.botId, source.source_id));
    if (res.ok) setText(res.value.text);
  }

  async function confirmRemove() {
    const res = await remove.run(() => agents.removeKnowledge(props.botId, source.source_id));
    if (res.ok) props.onRemoved();
  }

  return (
    <li>
      <div class="list-row">
        <div>
          <span class="cell-main">{source.title || source.source_id}</span>
          <span class="cell-sub">
            <Badge tone={source.origin === 'scan' ? 'info' : 'neutral'}>
              {source.origin === 'scan' ? 'Page' : 'Text'}
            </Badge>{' '}
            {source.url ? <span class="break">{source.url}</span> : source.source_id} · {source.fragments} fragment
            {source.fragments === 1 ? '' : 's'} · updated <Time ms={source.updated_at} relative />
          </span>
        </div>
        <div class="row-actions">
          <Button
            small
            variant="ghost"
            onClick={() => void toggleText()}
            busy={Boolean(show.busy)}
            aria-expanded={text !== undefined}
          >
            {text === undefined ? 'Show text' : 'Hide text'}
          </Button>
          {props.canDelete && !confirming && (
            <Button
              small
              variant="ghost"
              onClick={() => setConfirming(true)}
              aria-label={`Delete ${source.title || source.source_id}`}
            >
              Delete
            </Button>
          )}
        </div>
      </div>
      {confirming && (
        <ConfirmDelete
          what="source"
          busy={Boolean(remove.busy)}
          onDelete={() => void confirmRemove()}
          onKeep={() => setConfirming(false)}
        >
          Delete this source? The agent forgets it at once.
        </ConfirmDelete>
      )}
      {show.failure && <ErrorBox failure={show.failure} />}
      {remove.failure && <ErrorBox failure={remove.failure} />}
      {text !== undefined && <pre class="source-text">{text}</pre>}
    </li>
  );
}

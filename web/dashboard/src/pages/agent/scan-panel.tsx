import { useEffect, useRef, useState } from 'preact/hooks';
import { type Scan, agents } from '../../api/agents';
import { Button } from '../../ui/buttons';
import { Field, valueOf } from '../../ui/fields';
import { Time, formatNumber } from '../../ui/format';
import { Panel } from '../../ui/page';
import { useAction, useResource } from '../../ui/resource';
import { Badge, ErrorBox, Loading } from '../../ui/status';
import { usePolling } from '../../use-polling';
import { parsePatterns, scanProblem, scanScope } from './scan-words';
import './scan-panel.css';
import type { TabProps } from './tab';

/** How often the scan list is read while a scan runs (the crawler updates its counters per page). */
const SCAN_POLL_MS = 1500;

/** What the scan form holds, as typed. */
type ScanFields = { url: string; maxPages: string; refreshDays: string; include: string; exclude: string };

export function ScanPanel(props: TabProps & { onFinished: () => void }) {
  const { bot } = props;
  const [fields, setFields] = useState<ScanFields>({
    url: '',
    maxPages: '50',
    refreshDays: '0',
    include: '',
    exclude: '',
  });
  const start = useAction();
  const { scans, list, latest, running, watching, expectNewScan } = useScanWatch(bot.id, props.onFinished);

  async function submit(event: Event) {
    event.preventDefault();
    const before = latest?.id;
    const res = await start.run(() =>
      agents.startScan(bot.id, {
        url: fields.url.trim(),
        max_pages: Number(fields.maxPages) || undefined,
        refresh_days: Number(fields.refreshDays),
        include: parsePatterns(fields.include),
        exclude: parsePatterns(fields.exclude),
      }),
    );
    if (res.ok) {
      expectNewScan(before);
      scans.reload();
    } else if (res.code === 'conflict') {
      scans.reload();
    }
  }

  return (
    <Panel
      title="Scan a website"
      id="scan"
      description="Reads the pages of a site (those its sitemap lists first, then those its links lead to; honouring robots.txt) and keeps their text."
    >
      {watching ? (
        latest && latest.status === 'scanning' ? (
          <ScanProgress scan={latest} botId={bot.id} onStopping={() => scans.reload()} />
        ) : (
          <Loading label="Starting the scan…" />
        )
      ) : (
        <ScanForm
          fields={fields}
          start={start}
          onChange={(key, value) => setFields((f) => ({ ...f, [key]: value }))}
          onSubmit={(e) => void submit(e)}
        />
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

/**
 * The agent's scans, read again while one runs or is about to show up; `onFinished` when one ended (even one too
 * quick to be seen running), since it changed the sources.
 */
function useScanWatch(botId: string, onFinished: () => void) {
  const scans = useResource(() => agents.scans(botId), [botId]);
  // From a start until the new scan shows up in the list (its row is written a moment after the 202): the id of
  // the newest scan before it, and when it was asked for.
  const [expecting, setExpecting] = useState<{ after: string | undefined; at: number } | undefined>();
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
    if (wasWatching.current && !watching) onFinished();
    wasWatching.current = watching;
  }, [watching]);

  /** A scan was started after the one with id `before` (the newest then): watch until it shows up. */
  const expectNewScan = (before: string | undefined) => setExpecting({ after: before, at: Date.now() });
  return { scans, list, latest, running, watching, expectNewScan };
}

/** Where to start, how far to go, how often to read again, and which paths to take or skip. */
function ScanForm(props: {
  fields: ScanFields;
  start: Pick<ReturnType<typeof useAction>, 'busy' | 'failure'>;
  onChange: (key: keyof ScanFields, value: string) => void;
  onSubmit: (event: Event) => void;
}) {
  const { fields, start } = props;
  return (
    <form onSubmit={props.onSubmit}>
      <Field id="scan-url" label="Start address">
        <input
          id="scan-url"
          type="url"
          required
          placeholder="https://www.example.com/"
          value={fields.url}
          onInput={(e) => props.onChange('url', valueOf(e))}
        />
      </Field>
      <div class="form-row">
        <Field id="scan-max" label="Pages at most" hint="1 to 150">
          <input
            id="scan-max"
            type="number"
            min={1}
            max={150}
            value={fields.maxPages}
            onInput={(e) => props.onChange('maxPages', valueOf(e))}
          />
        </Field>
        <Field id="scan-refresh" label="Read again every" hint="Days; 0 = never">
          <input
            id="scan-refresh"
            type="number"
            min={0}
            max={180}
            value={fields.refreshDays}
            onInput={(e) => props.onChange('refreshDays', valueOf(e))}
          />
        </Field>
      </div>
      <div class="form-row">
        <Field
          id="scan-include"
          label="Only these paths"
          optional
          hint="E.g. /docs/*, /help/* — * matches anything. Empty: the whole site."
        >
          <input
            id="scan-include"
            type="text"
            placeholder="/docs/*"
            value={fields.include}
            onInput={(e) => props.onChange('include', valueOf(e))}
          />
        </Field>
        <Field id="scan-exclude" label="Skip these paths" optional hint="E.g. /blog/*, /careers">
          <input
            id="scan-exclude"
            type="text"
            placeholder="/blog/*"
            value={fields.exclude}
            onInput={(e) => props.onChange('exclude', valueOf(e))}
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
  );
}

function scanSummary(scan: Scan): string {
  if (scan.status === 'scanning') return 'Scanning';
  const problem = scanProblem(scan.error_code, scan.url);
  if (scan.status === 'cancelled') return 'The scan was stopped.';
  if (scan.status === 'failed' || problem) return `The scan of ${scan.url} failed. ${problem?.title ?? ''}`;
  return `Scan done: ${scan.pages_indexed} pages indexed.`;
}

function ScanProgress(props: { scan: Scan; botId: string; onStopping: () => void }) {
  const { scan } = props;
  const stop = useAction();
  // The crawl ends when nothing is queued or the page budget is spent: estimate against whichever comes first.
  const total = Math.max(1, Math.min(scan.max_pages + scan.pages_skipped, scan.pages_fetched + scan.pages_queued));
  const done = Math.min(scan.pages_fetched, total);
  const percent = Math.round((done / total) * 100);
  return (
    <div class="scan-progress" data-testid="scan-progress">
      <div class="scan-progress-head">
        <Badge tone="info">Scanning</Badge>
        <span class="cell-main">{scan.url}</span>
        <Button
          small
          variant="secondary"
          class="scan-stop"
          busy={Boolean(stop.busy)}
          busyLabel="Stopping…"
          onClick={() =>
            void stop
              .run(() => agents.cancelScan(props.botId))
              .then((res) => {
                // Stopped, or it had just finished: either way the list says what became of it.
                if (res.ok || res.code === 'conflict') props.onStopping();
              })
          }
        >
          Stop scan
        </Button>
      </div>
      {stop.failure && stop.failure.code !== 'conflict' && <ErrorBox failure={stop.failure} />}
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
      <ScanScope scan={scan} />
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
                  <Time ms={scan.started_at} relative /> ·{' '}
                  {scan.status === 'cancelled' ? (
                    // What it had read was not kept: counting it as indexed would say otherwise.
                    <>{formatNumber(scan.pages_fetched)} read before it was stopped</>
                  ) : (
                    <>
                      {formatNumber(scan.pages_indexed)} indexed of {formatNumber(scan.pages_fetched)} fetched
                      {scan.pages_skipped ? `, ${formatNumber(scan.pages_skipped)} skipped` : ''}
                    </>
                  )}
                </span>
                <ScanScope scan={scan} />
                <ScanError scan={scan} />
              </div>
              <Badge tone={BADGE[scan.status]?.tone ?? 'neutral'}>{BADGE[scan.status]?.label ?? scan.status}</Badge>
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The scan's path patterns and what its sitemap gave, when there is either. */
function ScanScope(props: { scan: Scan }) {
  const scope = scanScope(props.scan);
  return scope ? (
    <span class="cell-sub scan-scope" data-testid="scan-scope">
      {scope}
    </span>
  ) : null;
}

const BADGE: Record<string, { tone: 'success' | 'danger' | 'info' | 'neutral'; label: string }> = {
  done: { tone: 'success', label: 'Done' },
  failed: { tone: 'danger', label: 'Failed' },
  cancelled: { tone: 'neutral', label: 'Stopped' },
  scanning: { tone: 'info', label: 'Scanning' },
};

/** Why a scan found nothing, in plain words, with the crawler's own message for whoever wants it. */
function ScanError(props: { scan: Scan }) {
  const { scan } = props;
  const problem = scanProblem(scan.error_code, scan.url);
  if (!problem) return scan.error ? <span class="cell-sub text-error">{scan.error}</span> : null;
  return (
    <div class="scan-problem" data-testid="scan-problem">
      <span class={`cell-sub${scan.status === 'cancelled' ? '' : ' text-error'}`}>{problem.title}</span>
      <span class="cell-sub">{problem.hint}</span>
      {scan.error && scan.status !== 'cancelled' && (
        <details class="scan-detail">
          <summary>Technical detail</summary>
          <code>{scan.error}</code>
        </details>
      )}
    </div>
  );
}

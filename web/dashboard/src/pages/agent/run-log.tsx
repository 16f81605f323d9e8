import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { type Run, type Trigger, automation } from '../../api/automation';
import { Button, RefreshButton } from '../../ui/buttons';
import { Time, formatNumber } from '../../ui/format';
import { Empty, Panel } from '../../ui/page';
import { Loaded, useResource } from '../../ui/resource';
import { Badge } from '../../ui/status';
import { usePolling } from '../../use-polling';
import { RunDetail } from './run-detail';
import './run-log.css';

/** How often the run log is read while one of its runs is still running. */
const RUNS_POLL_MS = 2000;
const RUNS_PER_PAGE = 20;

/** What woke the agent, in words (the run log's and the triggers' lists). */
export const KIND_LABEL: Record<string, string> = {
  manual: 'Manual',
  webhook: 'Webhook',
  schedule: 'Schedule',
  poll: 'Poll',
  chat: 'Chat',
};

function runBadge(status: string) {
  if (status === 'done') return <Badge tone="success">Done</Badge>;
  if (status === 'failed') return <Badge tone="danger">Failed</Badge>;
  if (status === 'running') return <Badge tone="info">Running</Badge>;
  if (status === 'skipped') return <Badge>Skipped</Badge>;
  return <Badge>{status}</Badge>;
}

function duration(run: Run): string {
  if (!run.finished_at) return '—';
  const ms = run.finished_at - run.started_at;
  return ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`;
}

/** How long a run started here is looked for in the log before giving up (its row comes a moment later). */
const AWAIT_RUN_MS = 30_000;

export function RunLog(props: {
  botId: string;
  version: number;
  triggers: Map<string, Trigger>;
  awaited?: { runId: string; since: number };
  onFound: () => void;
}) {
  const [cursors, setCursors] = useState<string[]>(['']);
  /** The run whose detail is open under its row. */
  const [open, setOpen] = useState<string | null>(null);
  const page = cursors.length - 1;
  const runs = useResource(
    () => automation.runs(props.botId, cursors[page] || undefined, RUNS_PER_PAGE),
    [props.botId, page, props.version],
  );
  const list = runs.data?.runs ?? [];
  const running = list.some((r) => r.status === 'running');
  const { awaited, onFound } = props;
  const waiting = awaited !== undefined && page === 0 && !list.some((r) => r.run_id === awaited.runId);

  useEffect(() => {
    if (awaited && (!waiting || Date.now() - awaited.since > AWAIT_RUN_MS)) onFound();
  }, [runs.resource, waiting]);

  // Runs finish on their own, and a run started here appears a moment later: read the log again until then.
  usePolling(
    async () => {
      runs.reload();
      return 'ok';
    },
    { everyMs: RUNS_POLL_MS, waitFirst: true, enabled: running || waiting },
    [],
  );

  return (
    <Panel
      title="Run log"
      id="runs"
      description="Every wake-up of this agent, newest first, with what it cost. Each run is a workflow in the Temporal UI."
      actions={<RefreshButton resource={runs} />}
    >
      <Loaded resource={runs.resource} retry={runs.retry} label="Loading runs…">
        {(data) =>
          data.runs.length === 0 && page === 0 ? (
            <Empty title="No runs yet" />
          ) : (
            <>
              <div class="table-wrap">
                <table class="table table-stack" aria-label="Runs" data-testid="runs">
                  <thead>
                    <tr>
                      <th scope="col">Status</th>
                      <th scope="col">Started by</th>
                      <th scope="col">Started</th>
                      <th scope="col">Took</th>
                      <th scope="col" class="num">
                        Credits
                      </th>
                      <th scope="col">Result</th>
                      <th scope="col">
                        <span class="visually-hidden">Details and workflow</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.runs.map((run) => {
                      const trigger = run.trigger_id ? props.triggers.get(run.trigger_id) : undefined;
                      const detailId = `run-detail-${run.run_id}`;
                      const shown = open === run.run_id;
                      return (
                        <Fragment key={run.run_id}>
                          <tr data-testid={`run-${run.run_id}`} class={shown ? 'run-row-open' : undefined}>
                            <td data-label="Status">{runBadge(run.status)}</td>
                            <td data-label="Started by">
                              {KIND_LABEL[run.trigger_kind] ?? run.trigger_kind}
                              {trigger && <span class="cell-sub">{trigger.name}</span>}
                            </td>
                            <td data-label="Started">
                              <Time ms={run.started_at} relative />
                            </td>
                            <td data-label="Took">{duration(run)}</td>
                            <td class="num" data-label="Credits">
                              {formatNumber(run.credits)}
                            </td>
                            <td class="run-result" data-label="Result">
                              {run.status === 'failed' ? (
                                <span class="text-error">{run.error ?? run.error_code ?? 'Failed'}</span>
                              ) : (
                                <span class="clamp">{run.answer ?? ''}</span>
                              )}
                            </td>
                            <td class="run-links">
                              <Button
                                small
                                variant="ghost"
                                aria-expanded={shown}
                                aria-controls={shown ? detailId : undefined}
                                onClick={() => setOpen(shown ? null : run.run_id)}
                              >
                                {shown ? 'Hide details' : 'Details'}
                              </Button>
                              {/* No link without a Temporal UI to open (TEMPORAL_UI_URL unset). */}
                              {run.workflow_url && (
                                <a href={run.workflow_url} target="_blank" rel="noopener" class="nowrap">
                                  Open in Temporal<span class="visually-hidden"> (run {run.run_id}, new tab)</span> ↗
                                </a>
                              )}
                            </td>
                          </tr>
                          {shown && (
                            <tr class="run-detail-row">
                              <td colSpan={7}>
                                <RunDetail run={run} id={detailId} />
                              </td>
                            </tr>
                          )}
                        </Fragment>
                      );
                    })}
                  </tbody>
                </table>
              </div>
              {(page > 0 || data.next_cursor) && (
                <nav class="pager" aria-label="Run log pages">
                  <Button small disabled={page === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
                    ← Newer
                  </Button>
                  <span>Page {page + 1}</span>
                  <Button
                    small
                    disabled={!data.next_cursor}
                    onClick={() => data.next_cursor && setCursors([...cursors, data.next_cursor])}
                  >
                    Older →
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

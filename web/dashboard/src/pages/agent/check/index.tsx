import { useEffect, useRef, useState } from 'preact/hooks';
import { type CheckRun, type CheckRunDetail, checksApi } from '../../../api/checks';
import type { Result } from '../../../api/client';
import { usePlace } from '../../../router';
import { Button, RefreshButton } from '../../../ui/buttons';
import { Empty, Panel } from '../../../ui/page';
import { Loaded, useAction, useResource } from '../../../ui/resource';
import { Badge, ErrorBox, Notice } from '../../../ui/status';
import { usePolling } from '../../../use-polling';
import type { TabProps } from '../tab';
import { lastDone, progressWords, scoreWords } from './model';
import { QuestionForm } from './question-form';
import { QuestionList } from './questions';
import { Trend } from './trend';
import './check.css';

/** How often the runs are read while a check runs (its counters move with every ten questions). */
const RUN_POLL_MS = 1000;

const noRun: Promise<Result<CheckRunDetail | undefined>> = Promise.resolve({ ok: true, value: undefined });

/**
 * The owner's check of the agent (docs/decisions/155-owner-check.md): test questions, each with the knowledge source that
 * should answer it; "Run the check" puts them all through what a chat turn reads and shows, per question, whether the
 * source was among the first five passages; the score of past checks shows the trend. `?question=` (from "what is
 * missing") opens the add form with that question. Operators read; owners and admins change and run.
 */
export function CheckTab(props: TabProps) {
  const { bot, admin } = props;
  const place = usePlace();
  const [initialQuestion] = useState(() => place.search.get('question') ?? undefined);
  const [adding, setAdding] = useState(Boolean(initialQuestion) && admin);
  const questions = useResource(() => checksApi.questions(bot.id), [bot.id]);
  const check = useCheckRuns(bot.id);
  const { detail, done } = check;
  const count = questions.data?.questions.length ?? 0;

  return (
    <>
      <CheckPanel botId={bot.id} admin={admin} count={count} check={check} />

      <Panel
        title="Test questions"
        id="check-questions"
        description="Write them by hand, or pick one from what visitors asked that the agent could not answer."
        actions={
          <>
            <RefreshButton resource={questions} />
            {admin && !adding && (
              <Button small onClick={() => setAdding(true)}>
                Add a question
              </Button>
            )}
          </>
        }
      >
        <Loaded resource={questions.resource} retry={questions.retry} label="Loading the test questions…">
          {(data) => (
            <>
              {adding && (
                <QuestionForm
                  botId={bot.id}
                  limits={data.limits}
                  initialQuestion={initialQuestion}
                  save={(input) => checksApi.addQuestion(bot.id, { ...input, note: input.note ?? undefined })}
                  onSaved={(saved) => {
                    questions.set((d) => ({ ...d, questions: [...d.questions, saved] }));
                    setAdding(false);
                  }}
                  onCancel={() => setAdding(false)}
                />
              )}
              {data.questions.length >= data.limits.questions && admin && (
                <Notice tone="info">
                  The agent keeps at most {data.limits.questions} test questions: delete one to add another.
                </Notice>
              )}
              {data.questions.length === 0 ? (
                !adding && (
                  <Empty title="No test questions yet">
                    <p>Add the questions visitors ask most, each with the source that should answer it.</p>
                  </Empty>
                )
              ) : (
                <>
                  {detail.state === 'error' && <ErrorBox failure={detail.failure} onRetry={detail.retry} />}
                  <QuestionList
                    botId={bot.id}
                    questions={data.questions}
                    limits={data.limits}
                    lastRun={detail.data}
                    resultsPending={Boolean(done) && detail.data?.id !== done?.id}
                    admin={admin}
                    onChanged={(saved) =>
                      questions.set((d) => ({
                        ...d,
                        questions: d.questions.map((q) => (q.id === saved.id ? saved : q)),
                      }))
                    }
                    onDeleted={(id) =>
                      questions.set((d) => ({ ...d, questions: d.questions.filter((q) => q.id !== id) }))
                    }
                  />
                </>
              )}
            </>
          )}
        </Loaded>
      </Panel>
    </>
  );
}

/**
 * The agent's runs of the check, read again every second while one runs; the last finished one with its results; and
 * `announced`, what a screen reader is told when a run ends.
 */
function useCheckRuns(botId: string) {
  const runs = useResource(() => checksApi.runs(botId), [botId]);
  const list = runs.data?.runs ?? [];
  const running = list.find((r) => r.status === 'running');
  const done = lastDone(list);
  const detail = useResource(() => (done ? checksApi.run(botId, done.id) : noRun), [botId, done?.id]);
  const [announced, setAnnounced] = useState('');
  const wasRunning = useRef(false);

  usePolling(
    async () => {
      runs.reload();
      return 'ok';
    },
    { everyMs: RUN_POLL_MS, waitFirst: true, enabled: Boolean(running) },
    [],
  );

  // A check that ended is said once, politely, for those who cannot see the badge change.
  useEffect(() => {
    if (wasRunning.current && !running && done) setAnnounced(`The check is done: ${scoreWords(done, true)}.`);
    wasRunning.current = Boolean(running);
  }, [running?.id, done?.id]);

  return { runs, list, running, done, detail, announced };
}

/** "Run the check", the run under way, and the score's trend over past runs. */
function CheckPanel(props: { botId: string; admin: boolean; count: number; check: ReturnType<typeof useCheckRuns> }) {
  const { admin, count } = props;
  const { runs, list, running, announced } = props.check;
  const start = useAction();

  async function runCheck() {
    const res = await start.run(() => checksApi.start(props.botId));
    if (res.ok) runs.set((data) => ({ running: true, runs: [res.value, ...data.runs] }));
    else if (res.code === 'conflict') runs.reload();
  }

  return (
    <Panel
      title="Check the agent"
      id="check"
      description="Test questions, each with the source that should answer it. The check asks each one as a visitor would and looks at the first five passages the agent reads for it."
      actions={
        admin && (
          <Button
            variant="primary"
            busy={Boolean(start.busy) || Boolean(running)}
            busyLabel={running ? 'Checking…' : 'Starting…'}
            disabled={count === 0}
            onClick={() => void runCheck()}
          >
            Run the check
          </Button>
        )
      }
    >
      {start.failure && (
        <ErrorBox
          failure={
            start.failure.code === 'conflict'
              ? { ...start.failure, message: 'A check of this agent is already running.' }
              : start.failure
          }
        />
      )}
      {running && <CheckProgress running={running} />}
      <p class="visually-hidden" aria-live="polite">
        {announced}
      </p>
      {runs.state === 'error' && <ErrorBox failure={runs.failure} onRetry={runs.retry} />}
      {list.length > 0 ? (
        <Trend runs={list} />
      ) : (
        runs.state === 'ready' && (
          <p class="muted" data-testid="check-never-run">
            The agent has not been checked yet.
            {admin && count > 0 ? ' Run the check to see what it finds.' : ''}
          </p>
        )
      )}
    </Panel>
  );
}

/** How far the run under way is, as a bar and in words. */
function CheckProgress({ running }: { running: CheckRun }) {
  return (
    <div class="check-progress" data-testid="check-progress">
      <div class="check-progress-head">
        <Badge tone="info">Checking</Badge>
        <span>{progressWords(running)}</span>
      </div>
      <progress
        max={running.total}
        value={running.checked}
        aria-label="Check progress"
        aria-valuetext={progressWords(running)}
      />
    </div>
  );
}

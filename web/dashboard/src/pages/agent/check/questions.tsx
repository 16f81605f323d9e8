import { useState } from 'preact/hooks';
import { type CheckQuestion, type CheckResult, type CheckRunDetail, checksApi } from '../../../api/checks';
import { Link } from '../../../router';
import { Button, ConfirmDelete } from '../../../ui/buttons';
import { useAction } from '../../../ui/resource';
import { Badge, ErrorBox } from '../../../ui/status';
import { knowledgeAddress } from '../knowledge';
import { type QuestionStatus, statusOf, statusWords } from './model';
import { type Limits, QuestionForm } from './question-form';

const passageCount = (n: number) => (n === 0 ? 'nothing matched' : n === 1 ? '1 passage' : `${n} passages`);

const TONE = { found: 'success', not_found: 'warning', source_missing: 'danger', unchecked: 'neutral' } as const;

/** The test questions, each with its expected source and what the last finished check said of it. */
export function QuestionList(props: {
  botId: string;
  questions: CheckQuestion[];
  limits: Limits;
  /** The last finished run with its results; absent before the first. */
  lastRun?: CheckRunDetail;
  /** The last finished run's results are still being read: no result is shown yet. */
  resultsPending: boolean;
  admin: boolean;
  onChanged: (saved: CheckQuestion) => void;
  onDeleted: (id: string) => void;
}) {
  return (
    <ol class="list check-questions" aria-label="Test questions" data-testid="check-questions">
      {props.questions.map((q) => (
        <QuestionRow
          key={q.id}
          {...props}
          question={q}
          status={props.resultsPending ? undefined : statusOf(q, props.lastRun)}
        />
      ))}
    </ol>
  );
}

function QuestionRow(props: {
  botId: string;
  question: CheckQuestion;
  /** Absent while the last check's results are being read. */
  status?: QuestionStatus<CheckResult>;
  limits: Limits;
  admin: boolean;
  onChanged: (saved: CheckQuestion) => void;
  onDeleted: (id: string) => void;
}) {
  const { question: q, status } = props;
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const remove = useAction();
  const id = `check-q-${q.id}`;

  if (editing) {
    return (
      <li data-testid="check-question">
        <QuestionForm
          botId={props.botId}
          limits={props.limits}
          editing={q}
          save={(input) => checksApi.editQuestion(props.botId, q.id, input)}
          onSaved={(saved) => {
            setEditing(false);
            props.onChanged(saved);
          }}
          onCancel={() => setEditing(false)}
        />
      </li>
    );
  }

  async function doRemove() {
    const res = await remove.run(() => checksApi.deleteQuestion(props.botId, q.id));
    if (res.ok || res.status === 404) props.onDeleted(q.id);
  }

  return (
    <li data-testid="check-question">
      <div class="list-row">
        <div>
          <p class="check-question-text" id={`${id}-q`}>
            {q.question}
          </p>
          <p class="check-question-meta">
            Should be answered by{' '}
            {q.expected_source_title === null ? (
              <span data-testid="check-expected">
                <span class="mono">{q.expected_source_id}</span> <Badge tone="danger">No longer exists</Badge>
              </span>
            ) : (
              <Link href={knowledgeAddress(props.botId, q.expected_source_id)} data-testid="check-expected">
                {q.expected_source_title}
              </Link>
            )}
          </p>
          {q.note && <p class="check-question-note">{q.note}</p>}
        </div>
        <div class="check-question-side">
          {status && (
            <span data-testid="check-outcome">
              <Badge tone={TONE[status.kind]}>{statusWords(status)}</Badge>
            </span>
          )}
          {props.admin && !confirming && (
            <div class="row-actions">
              <Button small variant="ghost" aria-describedby={`${id}-q`} onClick={() => setEditing(true)}>
                Edit
              </Button>
              <Button small variant="ghost" aria-describedby={`${id}-q`} onClick={() => setConfirming(true)}>
                Delete
              </Button>
            </div>
          )}
        </div>
      </div>
      {confirming && (
        <ConfirmDelete
          what="test question"
          busy={Boolean(remove.busy)}
          onDelete={() => void doRemove()}
          onKeep={() => setConfirming(false)}
        >
          Delete this test question? Past checks keep their result for it.
        </ConfirmDelete>
      )}
      {remove.failure && remove.failure.status !== 404 && <ErrorBox failure={remove.failure} title="Not deleted." />}
      {status && status.kind !== 'unchecked' && (
        <>
          {status.changed && (
            <p class="check-question-changed muted small">
              Changed since that check, which asked “{status.result.question}”.
            </p>
          )}
          <details class="details check-passages" data-testid="check-passages">
            <summary>What the agent read ({passageCount(status.result.passages.length)})</summary>
            {status.result.passages.length === 0 ? (
              <p class="muted small">No passage of its knowledge matched the question.</p>
            ) : (
              <ol class="check-passage-list">
                {status.result.passages.map((p, i) => (
                  <li
                    key={`${p.source_id}-${i}`}
                    class={p.source_id === status.result.expected_source_id ? 'check-passage-expected' : undefined}
                    data-testid="check-passage"
                  >
                    <span class="cell-main">{p.title}</span>
                    {p.source_id === status.result.expected_source_id && (
                      <>
                        {' '}
                        <Badge tone="success">Expected source</Badge>
                      </>
                    )}
                    {(p.heading_path?.length || p.page) && (
                      <span class="cell-sub">
                        {[p.heading_path?.join(' › '), p.page ? `page ${p.page}` : undefined]
                          .filter(Boolean)
                          .join(' · ')}
                      </span>
                    )}
                    <span class="check-passage-excerpt">{p.excerpt}</span>
                  </li>
                ))}
              </ol>
            )}
          </details>
        </>
      )}
    </li>
  );
}

import { useEffect, useRef, useState } from 'preact/hooks';
import { agents } from '../../api/agents';
import { Link, usePlace } from '../../router';
import { Button } from '../../ui/buttons';
import { Field, valueOf } from '../../ui/fields';
import { Panel } from '../../ui/page';
import { Loaded, useAction, useResource } from '../../ui/resource';
import { ErrorBox } from '../../ui/status';
import { Sources } from './knowledge-sources';
import { TestQuestion } from './knowledge-test';
import { ScanPanel } from './scan-panel';
import { UploadFiles } from './upload-files';
import { SourceRow } from './source-row';
import './knowledge.css';
import type { TabProps } from './tab';

/** The Knowledge tab opened on one source (`?source=`): it is shown first, whatever page of the list it is on. */
export const knowledgeAddress = (botId: string, sourceId?: string) =>
  `/agents/${botId}/knowledge${sourceId ? `?source=${encodeURIComponent(sourceId)}` : ''}`;

/**
 * The agent's knowledge: site scans with live progress, texts added by hand, what a question retrieves
 * (./knowledge-test), and every source, page by page, newest first, searchable by title, id or text and by kind
 * (./knowledge-sources). Opened with `?source=` (a link from elsewhere, e.g. an
 * answer just added in Insights), that source comes first, highlighted.
 */
export function KnowledgeTab(props: TabProps) {
  const focused = usePlace().search.get('source');
  // Bumped when something changed the sources (a text added, a scan finished), to read the list again.
  const [version, setVersion] = useState(0);
  return (
    <>
      {focused && (
        <FocusedSource key={focused} {...props} sourceId={focused} onChanged={() => setVersion((v) => v + 1)} />
      )}
      {props.admin && (
        <div class="grid-2">
          <ScanPanel {...props} onFinished={() => setVersion((v) => v + 1)} />
          <AddText {...props} onAdded={() => setVersion((v) => v + 1)} />
        </div>
      )}
      {props.admin && <UploadFiles {...props} onIndexed={() => setVersion((v) => v + 1)} />}
      <TestQuestion {...props} />
      <Sources {...props} version={version} />
    </>
  );
}

/**
 * The source the address names, read on its own (the list is 20 a page, searched or not: it may be pages away), with its
 * text shown and the list's actions; scrolled to and focused once read. Gone (deleted, or a stale link): said so.
 */
function FocusedSource(props: TabProps & { sourceId: string; onChanged: () => void }) {
  const { bot, sourceId } = props;
  const source = useResource(() => agents.source(bot.id, sourceId), [bot.id, sourceId]);
  const box = useRef<HTMLDivElement>(null);
  const shown = useRef(false);
  const ready = source.state === 'ready';
  useEffect(() => {
    if (!ready || shown.current || !box.current) return;
    shown.current = true;
    box.current.scrollIntoView({ block: 'start' });
    box.current.focus({ preventScroll: true });
  }, [ready]);
  const changedHere = () => {
    source.reload();
    props.onChanged();
  };
  const gone = source.state === 'error' && source.failure.status === 404;
  return (
    <div class="source-focus" ref={box} tabIndex={-1} data-testid="focused-source">
      <Panel
        title="The source you opened"
        id="focused-source"
        actions={<Link href={knowledgeAddress(bot.id)}>Show only the list</Link>}
      >
        {gone ? (
          <p data-testid="focused-source-gone">
            That source no longer exists: it was deleted, or the link is old. The agent&rsquo;s sources are listed
            below.
          </p>
        ) : (
          <Loaded resource={source.resource} retry={source.retry} label="Loading the source…">
            {(data) => (
              <ul class="list" aria-label="The source you opened">
                <SourceRow
                  key={`${data.source_id} ${data.updated_at}`}
                  botId={bot.id}
                  source={data}
                  text={data.text}
                  canDelete={props.admin}
                  onRemoved={changedHere}
                  onEdited={changedHere}
                />
              </ul>
            )}
          </Loaded>
        )}
      </Panel>
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

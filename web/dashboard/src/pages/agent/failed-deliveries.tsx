import { type FailedDelivery, deliveriesApi } from '../../api/deliveries';
import { Button } from '../../ui/buttons';
import { Time } from '../../ui/format';
import { Panel } from '../../ui/page';
import { useAction, useResource } from '../../ui/resource';
import { Badge, ErrorBox } from '../../ui/status';
import { usePolling } from '../../use-polling';
import type { TabProps } from './tab';

/** While a delivery is being sent again, the list is read this often until it arrived or was given up. */
const SENDING_POLL_MS = 2_000;

const EVENT_LABEL: Record<string, string> = {
  escalated: 'Handed to your team',
  visitor_message: 'Visitor message',
  resolved: 'Conversation closed',
};

/**
 * The agent's webhook deliveries given up (after the last retry, or a final 4xx), for the owner and admins: what
 * failed, where to, why and when, and "Send again" — a new delivery of the same event to the address as it is now
 * (docs/decisions/144-failed-deliveries-told.md). Shown only when there are some; the dashboard's notification links here.
 */
export function FailedDeliveries(props: Pick<TabProps, 'bot'>) {
  const list = useResource(() => deliveriesApi.failed(props.bot.id), [props.bot.id]);
  const sending = list.data?.deliveries.some((d) => d.sent_again?.status === 'pending') ?? false;
  usePolling(
    async () => {
      list.reload();
      return 'ok';
    },
    { everyMs: SENDING_POLL_MS, onlyWhenVisible: true, waitFirst: true, enabled: sending },
    [props.bot.id],
  );
  if (list.state === 'error' && !list.data) return <ErrorBox failure={list.failure} onRetry={list.retry} />;
  const deliveries = list.data?.deliveries ?? [];
  if (deliveries.length === 0) return null;
  return (
    <Panel
      id="failed-deliveries"
      title="Webhook deliveries that failed"
      description={
        <>
          Events your webhook address did not accept, after every retry. Your team may not have heard about these
          conversations. Fix the address or the receiver, then send them again.
        </>
      }
    >
      <ul class="list" data-testid="failed-deliveries">
        {deliveries.map((d) => (
          <FailedRow
            key={d.id}
            botId={props.bot.id}
            delivery={d}
            onSent={(id) =>
              list.set((data) => ({
                deliveries: data.deliveries.map((x) =>
                  x.id === d.id ? { ...x, sent_again: { id, status: 'pending' } } : x,
                ),
              }))
            }
          />
        ))}
      </ul>
    </Panel>
  );
}

function FailedRow(props: { botId: string; delivery: FailedDelivery; onSent: (id: string) => void }) {
  const d = props.delivery;
  const action = useAction();
  async function sendAgain() {
    const res = await action.run(() => deliveriesApi.sendAgain(props.botId, d.id));
    if (res.ok) props.onSent(res.value.id);
  }
  const why = d.last_status ? `HTTP ${d.last_status}` : (d.last_error ?? 'No answer');
  return (
    <li class="list-row" data-testid="failed-delivery">
      <div>
        <span class="cell-main">{EVENT_LABEL[d.event] ?? d.event}</span> <Badge tone="danger">Failed</Badge>
        <span class="cell-sub">
          To <code>{d.url}</code> · {d.attempts} attempt{d.attempts === 1 ? '' : 's'} · given up{' '}
          <Time ms={d.failed_at} relative />
        </span>
        <span class="cell-sub text-error" data-testid="failed-delivery-error">
          {why}
        </span>
        {action.failure && <ErrorBox failure={action.failure} title="Not sent again." />}
      </div>
      <div class="row-actions">
        {d.sent_again?.status === 'delivered' ? (
          <Badge tone="success">Delivered when sent again</Badge>
        ) : d.sent_again?.status === 'pending' ? (
          <Badge tone="info">Sending again…</Badge>
        ) : (
          <Button
            small
            variant="primary"
            busy={action.busy === 'busy'}
            busyLabel="Sending…"
            onClick={() => void sendAgain()}
            aria-label={`Send the “${EVENT_LABEL[d.event] ?? d.event}” event again`}
          >
            Send again
          </Button>
        )}
      </div>
    </li>
  );
}

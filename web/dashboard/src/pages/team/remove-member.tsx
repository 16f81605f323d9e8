import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { type Member, type Revoked, teamApi } from '../../api/team';
import { Button } from '../../ui/buttons';
import { useAction } from '../../ui/resource';
import { ErrorBox } from '../../ui/status';

/** A modal confirmation (native `<dialog>`: focus is kept inside, Escape cancels, focus returns to the opener). */
export function ConfirmRemove(props: { member: Member; onClose: () => void; onRemoved: (revoked?: Revoked) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  const action = useAction();
  const display = props.member.name?.trim() || props.member.email;

  useEffect(() => {
    opener.current = document.activeElement as HTMLElement | null;
    dialog.current?.showModal();
    return () => opener.current?.focus();
  }, []);

  async function remove() {
    const res = await action.run(() => teamApi.remove(props.member.id));
    if (res.ok || res.status === 404) {
      opener.current = document.getElementById('members-title');
      props.onRemoved(res.ok ? res.value : undefined);
    }
  }

  return (
    <dialog
      ref={dialog}
      class="confirm-dialog"
      aria-labelledby="confirm-title"
      aria-describedby="confirm-text"
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <h2 id="confirm-title">Remove {display}?</h2>
      <p id="confirm-text">
        {props.member.email} loses access at once: their sessions end and their account is deleted, and the builder keys
        and pending invitations they issued are revoked. Keys they were shown that still work are listed to rotate (or
        rotated at once, if the workspace is set so). Conversations they answered stay. To bring them back, invite them
        again.
      </p>
      {action.failure && <ErrorBox failure={action.failure} title="Not removed." />}
      <DialogActions>
        <Button onClick={props.onClose} autoFocus>
          Cancel
        </Button>
        <Button variant="danger" busy={action.busy !== false} busyLabel="Removing…" onClick={() => void remove()}>
          Remove {display}
        </Button>
      </DialogActions>
    </dialog>
  );
}

function DialogActions(props: { children: ComponentChildren }) {
  return <div class="dialog-actions">{props.children}</div>;
}

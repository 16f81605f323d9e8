import { useState } from 'preact/hooks';
import { alertsOn, switchAlerts } from '../../alerts';
import { Button } from '../../ui/buttons';

/** Desktop notifications and a tone for new requests, on this device (the browser asks for permission once). */
export function AlertsToggle() {
  const [on, setOn] = useState(alertsOn());
  const [refused, setRefused] = useState(false);
  return (
    <div class="alerts-toggle">
      <Button
        variant="secondary"
        aria-pressed={on}
        onClick={() =>
          void switchAlerts(!on).then((done) => {
            setRefused(!done);
            if (done) setOn(!on);
          })
        }
      >
        {on ? 'Alerts on for this device' : 'Alert me of new requests'}
      </Button>
      {refused && (
        <p class="muted small" role="status">
          The browser refused notifications for this site; allow them in its site settings.
        </p>
      )}
    </div>
  );
}

/**
 * Telling the team a visitor asked for a person when they are not looking at the inbox: the count in the tab's
 * title (kept there whatever title a page sets), and — on a device where someone switched alerts on — a desktop
 * notification and a short tone when the count rises.
 */

const ALERTS_KEY = 'ap-dashboard:alerts';

/** Whether this device alerts (a person's choice, kept in this browser) and may (the browser's permission). */
export function alertsOn(): boolean {
  return (
    localStorage.getItem(ALERTS_KEY) === 'on' &&
    typeof Notification !== 'undefined' &&
    Notification.permission === 'granted'
  );
}

/** Asks the browser for permission and remembers the choice; false when the browser refuses. */
export async function switchAlerts(on: boolean): Promise<boolean> {
  if (!on) {
    localStorage.removeItem(ALERTS_KEY);
    return true;
  }
  if (typeof Notification === 'undefined') return false;
  const permission = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
  if (permission !== 'granted') return false;
  localStorage.setItem(ALERTS_KEY, 'on');
  return true;
}

/** The count rose from `before` to `now`: a desktop notification and a tone, if this device alerts. */
export function alertNewRequests(before: number, now: number): void {
  if (now <= before || !alertsOn()) return;
  const n = now - before;
  const note = new Notification(n === 1 ? 'A visitor asked for a person' : `${n} visitors asked for a person`, {
    body: 'Open the inbox to answer.',
    tag: 'agent-platform-requests',
  });
  note.onclick = () => {
    window.focus();
    location.assign('/inbox');
  };
  tone();
}

function tone(): void {
  try {
    const audio = new AudioContext();
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = 880;
    gain.gain.setValueAtTime(0.15, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.35);
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + 0.35);
    osc.onended = () => void audio.close();
  } catch {
    // No audio on this device: the notification says it.
  }
}

const PREFIX = /^\(\d+\) /;

/** Keeps "(n) " in front of the tab's title while `n` > 0, whatever title the page sets meanwhile. */
export function keepTitleCount(count: number): () => void {
  const apply = () => {
    const bare = document.title.replace(PREFIX, '');
    const wanted = count > 0 ? `(${count}) ${bare}` : bare;
    if (document.title !== wanted) document.title = wanted;
  };
  apply();
  const title = document.querySelector('title');
  if (!title) return () => undefined;
  const observer = new MutationObserver(apply);
  observer.observe(title, { childList: true, characterData: true, subtree: true });
  return () => {
    observer.disconnect();
    document.title = document.title.replace(PREFIX, '');
  };
}

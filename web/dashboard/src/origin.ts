/**
 * What a person pastes as "a site the widget may run on" — `https://shop.example.com/checkout?step=2`, `shop.example.com`
 * — read as the browser's origin the API allows (`https://shop.example.com`). DOM-free, so it is unit-tested.
 */
export type OriginReading =
  | { ok: true; origin: string; /** the address had more than an origin (a path, a query), dropped */ trimmed: boolean }
  | { ok: false; problem: string };

export function readOrigin(typed: string): OriginReading {
  const text = typed.trim();
  if (!text) return { ok: false, problem: 'Write the address of a site, like https://shop.example.com.' };
  // A bare host name is a web site: https unless it says otherwise.
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return { ok: false, problem: 'This is not a web address. Write one like https://shop.example.com.' };
  }
  if (!/^https?:$/.test(url.protocol))
    return { ok: false, problem: 'The widget runs on web pages: the address starts with https:// (or http://).' };
  if (url.username || url.password)
    return { ok: false, problem: 'Leave out the user name and password: write the site’s address only.' };
  if (!url.hostname.includes('.') && url.hostname !== 'localhost' && !url.hostname.startsWith('['))
    return {
      ok: false,
      problem: `“${url.hostname}” is not a site’s address. Write one like https://shop.example.com.`,
    };
  const trimmed = (url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '';
  return { ok: true, origin: url.origin, trimmed };
}

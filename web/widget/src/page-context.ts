/**
 * What the page is, for the bot (ChatRequest `page_context`): its title and its address without the query string or
 * fragment — those can hold tokens (a reset link, a session id, a campaign's personal parameters) that have no
 * business in a transcript, a model's prompt or a webhook.
 */
export function pageContextOf(title: string, location: { origin: string; pathname: string }): string {
  return `Page: ${title}\nAddress: ${location.origin}${location.pathname}`.slice(0, 1000);
}

/** The tag an owner pastes into their pages: the widget's script from this dashboard's origin, with the public key. */
export function widgetSnippet(publicKey: string, origin = location.origin): string {
  return `<script src="${origin}/widget.js" data-key="${publicKey}" async></script>`;
}

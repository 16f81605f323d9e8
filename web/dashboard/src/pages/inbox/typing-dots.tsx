/** Three dots that pulse while the visitor types (in the list and in the open conversation). */
export function TypingDots() {
  return (
    <span class="typing-dots" aria-hidden="true">
      <span />
      <span />
      <span />
    </span>
  );
}

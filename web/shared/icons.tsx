/**
 * Line icons (24×24, stroked with the text colour) for the widget and the dashboard. Decorative: every control carries
 * its own accessible name, and the words beside an icon say the same.
 */
function Icon(props: { d: string; size?: number }) {
  const size = props.size ?? 20;
  return (
    <svg
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width="2"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      <path d={props.d} />
    </svg>
  );
}

export const ChatIcon = () => <Icon size={26} d="M21 12a8 8 0 0 1-11.6 7.1L4 20.5l1.4-5A8 8 0 1 1 21 12z" />;
export const CloseIcon = (props: { size?: number }) => <Icon size={props.size} d="M6 6l12 12M18 6L6 18" />;
export const SendIcon = () => <Icon d="M4 12l16-8-6 16-2.5-6.5L4 12z" />;
export const ImageIcon = () => (
  <Icon d="M4 5h16a1 1 0 0 1 1 1v12a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1V6a1 1 0 0 1 1-1zm5 5.5a1.5 1.5 0 1 0 0-.01M21 16l-5-5-9 8" />
);
export const ThumbUpIcon = (props: { size?: number }) => (
  <Icon
    size={props.size ?? 16}
    d="M7 11v9H4v-9h3zm0 0l4-8a2 2 0 0 1 2 2v4h5.5a2 2 0 0 1 2 2.3l-1.2 7A2 2 0 0 1 17.3 20H7"
  />
);
export const ThumbDownIcon = (props: { size?: number }) => (
  <Icon
    size={props.size ?? 16}
    d="M17 13V4h3v9h-3zm0 0l-4 8a2 2 0 0 1-2-2v-4H5.5a2 2 0 0 1-2-2.3l1.2-7A2 2 0 0 1 6.7 4H17"
  />
);
export const PersonIcon = (props: { size?: number }) => (
  <Icon size={props.size ?? 16} d="M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zm-7 8a7 7 0 0 1 14 0" />
);
export const NoteIcon = () => <Icon size={16} d="M4 6h16v12H4zM4 7l8 6 8-6" />;
export const ContactIcon = (props: { size?: number }) => (
  <Icon size={props.size} d="M4 5h16v14H4zM9 11a2 2 0 1 0 0-.01M6 16a3 3 0 0 1 6 0M14 9h4M14 13h4" />
);

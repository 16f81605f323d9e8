import base from './base.css?inline';
import launcher from './launcher.css?inline';
import panel from './panel.css?inline';
import conversation from './conversation.css?inline';
import sources from './sources.css?inline';
import composer from './composer.css?inline';
import screens from './screens.css?inline';
import markdown from './markdown.css?inline';
import satisfaction from './satisfaction.css?inline';

/**
 * The widget's stylesheet, put into its shadow root by main.tsx: the parts in cascade order (later parts override
 * earlier ones: the owner's corner and a phone's screen come after what they change).
 */
export const widgetCss = [base, launcher, panel, conversation, sources, composer, screens, markdown, satisfaction].join(
  '\n',
);

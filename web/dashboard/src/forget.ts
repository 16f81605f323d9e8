import { forgetBuilderConversation } from './pages/builder';

/**
 * At sign-out nothing the signed-in person saw stays in this browser: the builder's conversation (replies may carry
 * secrets shown once) and whatever this origin keeps in the browser's storage.
 */
export function forgetSignedInState(): void {
  forgetBuilderConversation();
  try {
    sessionStorage.clear();
    localStorage.clear();
  } catch {
    // storage disabled: nothing kept there
  }
}

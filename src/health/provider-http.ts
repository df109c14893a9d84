import type { ProfiledProvider } from '../protocols/core/provider-profile.js';
import { profileOf } from '../protocols/profiles.js';

/** How a check talks to a provider's server outside the chat endpoint: its credentials in the style of its type (its profile's). */
export function checkHeaders(provider: ProfiledProvider): Record<string, string> {
  return profileOf(provider).checkHeaders(provider);
}

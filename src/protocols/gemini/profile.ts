import type { ProviderProfile } from '../core/provider-profile.js';
import { unbuilt } from './unbuilt.js';

export const geminiProfile: ProviderProfile = unbuilt('the Gemini provider profile');

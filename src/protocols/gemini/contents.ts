import { isLocalNetworkHost } from '../../util/loopback.js';
import { entryNamed, parseArguments } from '../core/fields.js';
import type { AssistantPart, ImageSource, NeutralMessage, NeutralPart } from '../core/neutral.js';
import { isUnsupported, type Unsupported } from '../core/types.js';
import { signedCallParts } from './thought-signatures.js';

type Part = Record<string, unknown>;
export interface GeminiContent {
  role: 'user' | 'model';
  parts: Part[];
}

/**
 * Neutral messages as Gemini's `contents`: roles `user` and `model`; a turn's tool results as
 * `functionResponse` parts of one user content (Gemini wants as many responses after a turn of
 * calls as it made calls, together), each named after its call (Gemini requires the name: the
 * call's, from the history, when the result does not say it); turns of one role merged.
 * Reasoning of past turns is left out (Gemini reads its own through signatures), and each model
 * turn's first call gets the signature Google documents for calls Gemini did not sign.
 */
export function geminiContents(messages: readonly NeutralMessage[]): GeminiContent[] | Unsupported {
  const out: GeminiContent[] = [];
  const callNames = new Map<string, string>();
  const push = (role: GeminiContent['role'], parts: Part[]): void => {
    if (parts.length === 0) return;
    const last = out.at(-1);
    if (last && last.role === role) last.parts.push(...parts);
    else out.push({ role, parts });
  };
  for (const message of messages) {
    if (message.role === 'assistant') {
      push('model', modelParts(message.content, callNames));
      continue;
    }
    const parts: Part[] = [];
    if (message.role === 'tool') {
      const text = message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
      // A result whose call is not in the history (a client's own editing) still needs a name.
      const response: Part = {
        name: message.name || callNames.get(message.toolCallId) || 'tool',
        response: message.isError ? { error: text } : { output: text },
      };
      if (message.toolCallId !== '') response.id = message.toolCallId;
      parts.push({ functionResponse: response });
    }
    for (const part of message.content) {
      if (part.type === 'text' && message.role === 'tool') continue;
      const converted = userPart(part);
      if (isUnsupported(converted)) return converted;
      parts.push(converted);
    }
    push('user', parts);
  }
  for (const content of out) if (content.role === 'model') content.parts = signedCallParts(content.parts) as Part[];
  return out;
}

function modelParts(content: readonly AssistantPart[], callNames: Map<string, string>): Part[] {
  const parts: Part[] = [];
  for (const part of content) {
    if (part.type === 'text') {
      if (part.text !== '') parts.push({ text: part.text });
    } else if (part.type === 'tool_call') {
      const call: Part = { name: part.name, args: parseArguments(part.arguments) };
      if (part.id !== '') {
        call.id = part.id;
        callNames.set(part.id, part.name);
      }
      parts.push({ functionCall: call });
    }
  }
  return parts;
}

function userPart(part: NeutralPart): Part | Unsupported {
  if (part.type === 'text') return { text: part.text };
  return imagePart(part.source);
}

/** The image types Gemini reads, by a URL's extension: it needs the type of a file it fetches. */
const IMAGE_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
};

/**
 * base64 data as `inlineData`; a URL as `fileData`, which Gemini fetches itself (a public or
 * signed https URL, or a file of Gemini's Files API). A URL it cannot fetch makes the tier
 * unable to carry the request: plain http, and any host on this machine or its network.
 */
function imagePart(source: ImageSource): Part | Unsupported {
  if (source.kind === 'base64') return { inlineData: { mimeType: source.mediaType, data: source.data } };
  let url: URL;
  try {
    url = new URL(source.url);
  } catch {
    return { unsupported: 'an image URL that is not a URL cannot be sent to a Gemini tier' };
  }
  if (url.protocol !== 'https:' || isLocalNetworkHost(url.hostname)) {
    return { unsupported: `Gemini fetches image URLs itself, over https from the internet; it cannot fetch ${url.protocol}//${url.hostname}/…` };
  }
  const extension = /\.([a-z0-9]+)$/i.exec(url.pathname)?.[1]?.toLowerCase();
  const mimeType = entryNamed(IMAGE_TYPES, extension);
  return { fileData: mimeType ? { mimeType, fileUri: source.url } : { fileUri: source.url } };
}

import type { ImageSource } from '../core/neutral.js';

const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+);base64,(.*)$/s;

/** An image URL as a neutral source: a `data:` URL is base64 data, anything else a URL. */
export function imageFromUrl(url: string): ImageSource {
  const match = DATA_URL.exec(url);
  return match ? { kind: 'base64', mediaType: match[1], data: match[2] } : { kind: 'url', url };
}

/** A neutral image as a URL (base64 data becomes a `data:` URL). */
export function imageToUrl(source: ImageSource): string {
  return source.kind === 'url' ? source.url : `data:${source.mediaType};base64,${source.data}`;
}

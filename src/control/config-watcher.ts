import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

const DEBOUNCE_MS = 150;

/**
 * Watches the tier file and calls `onChange` once per settled change. It watches the folder,
 * not the file, because editors save by writing a new file and renaming it over the old one;
 * unchanged content (a touch, a save without edits) is ignored.
 */
export class ConfigWatcher {
  private readonly watcher: FSWatcher | null;
  private timer: NodeJS.Timeout | null = null;
  private lastContent: string | null;

  constructor(
    private readonly file: string,
    private readonly onChange: () => void,
  ) {
    this.lastContent = this.read();
    const name = basename(file);
    try {
      this.watcher = watch(dirname(file), { persistent: false }, (_event, changed) => {
        if (changed === null || changed === name) this.schedule();
      });
      this.watcher.on('error', () => undefined); // the folder went away: nothing left to watch
    } catch {
      this.watcher = null;
    }
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.watcher?.close();
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      const content = this.read();
      if (content === null || content === this.lastContent) return;
      this.lastContent = content;
      this.onChange();
    }, DEBOUNCE_MS);
    this.timer.unref();
  }

  private read(): string | null {
    try {
      return readFileSync(this.file, 'utf8');
    } catch {
      return null; // mid-rename: the next event reads it
    }
  }
}
